import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { setMfaPolicy } from '../../src/auth/mfa/operator.js';
import * as verifier from '../../src/verifier/index.js';
import { createTestApp, postJson, seedAdmin, signIn, type TestApp } from '../helpers/app.js';
import { me, refresh } from '../helpers/contract.js';
import { REPO_ROOT } from '../helpers/cli-run.js';
import { adminWithTotp, loginRequest } from '../helpers/mfa.js';
import { readRepoFile, section } from './markdown.js';

// Callers write their clients from the README's samples: each must have the fields, in the
// order, that the service really answers with (the /me sample once lacked acr and amr).

const README = readRepoFile('README.md');

/** The `# {...}` answer printed under the curl command for `path` in First steps. */
function sampleAfter(path: string): string {
  const lines = section(README, 'First steps').split('\n');
  const start = lines.findIndex((line) => line.startsWith('curl') && line.includes(path));
  if (start < 0) return '';
  const after = lines.slice(start + 1);
  const next = after.findIndex((line) => line.startsWith('curl'));
  return after.slice(0, next < 0 ? undefined : next).filter((line) => line.startsWith('# ')).join(' ');
}

/** The README's `403 {...}` line whose detail is `detail`. */
function forbiddenSample(detail: string): string {
  return section(README, 'API').split('\n').find((line) => line.startsWith('403 ') && line.includes(`"detail":"${detail}"`)) ?? '';
}

const keysOf = (sample: string): string[] => [...sample.matchAll(/"([a-z_]+)":/g)].map((match) => match[1]!);

let t: TestApp | undefined;
afterEach(async () => {
  await t?.close();
  t = undefined;
});

describe('the README samples', () => {
  it('show the sign-in, /me and refresh answers with every field, in order', async () => {
    t = await createTestApp();
    const tokens = await signIn(t.app, await seedAdmin(t.services));
    expect(keysOf(sampleAfter('/admin/auth/login'))).toEqual(Object.keys(tokens));
    const who = (await me(t.app, tokens.access_token)).json<Record<string, unknown>>();
    expect(keysOf(sampleAfter('/admin/auth/me'))).toEqual(Object.keys(who));
    expect(sampleAfter('/admin/auth/me')).toContain(`"acr":"${String(who.acr)}","amr":${JSON.stringify(who.amr)}`);
    const renewed = (await refresh(t.app, tokens.refresh_token)).json<Record<string, unknown>>();
    expect(keysOf(sampleAfter('/auth/refresh'))).toEqual(Object.keys(renewed));
  });

  it('show the 403 that asks for the second factor as the service answers it', async () => {
    t = await createTestApp();
    const admin = await seedAdmin(t.services);
    await adminWithTotp(t, admin);
    const answer = await loginRequest(t.app, admin);
    expect(answer.statusCode).toBe(403);
    const body = answer.json<Record<string, unknown>>();
    const sample = forbiddenSample('Second factor required');
    expect(keysOf(sample)).toEqual(Object.keys(body));
    expect(sample).toContain(`"mfa_methods":${JSON.stringify(body.mfa_methods)},"expires_in":${String(body.expires_in)}`);
  });

  it('show the 403 that asks a required school\'s admin to enroll as the service answers it', async () => {
    t = await createTestApp();
    const admin = await seedAdmin(t.services);
    await setMfaPolicy(t.services, admin.schoolId, 'required');
    const answer = await postJson(t.app, '/admin/auth/login', { school_id: admin.schoolId, username: admin.username, password: admin.password });
    expect(answer.statusCode).toBe(403);
    const body = answer.json<Record<string, unknown>>();
    const sample = forbiddenSample('Second factor enrollment required');
    expect(keysOf(sample)).toEqual(Object.keys(body));
    expect(sample).toContain(`"mfa_methods":[],"expires_in":${String(body.expires_in)}`);
  });
});

describe("the README's verifier example", () => {
  const example = /```ts\n([\s\S]*?)```/.exec(section(README, 'Verifying tokens in another service'))?.[1] ?? '';

  it('imports what the package exports as school-auth/verifier', () => {
    const names = /import \{([^}]*)\} from 'school-auth\/verifier'/.exec(example)?.[1]?.split(',').map((name) => name.trim()) ?? [];
    expect(names.length).toBeGreaterThan(0);
    for (const name of names) expect(verifier).toHaveProperty(name);
    const exported = (JSON.parse(readRepoFile('package.json')) as { exports: Record<string, { default: string }> }).exports['./verifier']!;
    expect(existsSync(join(REPO_ROOT, exported.default))).toBe(true);
  });

  it('passes only options the verifier takes', () => {
    const options = readRepoFile('src/verifier/verifier-options.ts');
    const used = [...example.matchAll(/^\s+(\w+):/gm), ...example.matchAll(/`(\w+): '/g)].map((match) => match[1]!);
    expect(used).toEqual(expect.arrayContaining(['issuer', 'audience', 'jwksUrl', 'maxTokenAge', 'requireAcr']));
    for (const name of used) expect(options).toMatch(new RegExp(`readonly ${name}\\??: `));
  });
});
