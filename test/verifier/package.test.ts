/**
 * The verifier is a separate entry point for the platform's other services: a package that
 * depends on school-auth imports `school-auth/verifier` and nothing of the server. This test builds
 * such a package in a temporary directory (school-auth linked into its node_modules, as npm would
 * install it) and verifies a real token of the real compiled service with it.
 */
import { execFile } from 'node:child_process';
import { mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { REPO_ROOT, cleanupOps, loginHttp, seedWithCli, startServer, tempDir, type RunningServer } from '../helpers/ops-server.js';

const run = promisify(execFile);
const PASSWORD = 'verifier package passphrase 8';
let server: RunningServer;
let platformService: string;

const VERIFY_SCRIPT = `
import { createAccessTokenVerifier } from 'school-auth/verifier';
const [issuer, jwksUrl, token] = process.argv.slice(2);
const verify = createAccessTokenVerifier({ issuer, audience: 'school-admin', jwksUrl });
try {
  const claims = await verify(token);
  console.log(JSON.stringify({ ok: true, username: claims.username, acr: claims.acr }));
} catch (error) {
  console.log(JSON.stringify({ ok: false, code: error.code }));
}
verify.close();
process.exit(0);
`;

beforeAll(async () => {
  server = await startServer({});
  await seedWithCli(server, PASSWORD);
  platformService = tempDir('platform-service-');
  writeFileSync(join(platformService, 'package.json'), JSON.stringify({ name: 'platform-service', type: 'module', private: true }));
  mkdirSync(join(platformService, 'node_modules'));
  symlinkSync(REPO_ROOT, join(platformService, 'node_modules', 'school-auth'), 'dir');
  writeFileSync(join(platformService, 'verify.mjs'), VERIFY_SCRIPT);
}, 60_000);

afterAll(cleanupOps);

async function verifyFromPackage(token: string): Promise<{ ok: boolean; username?: string; acr?: string; code?: string }> {
  const issuer = `http://127.0.0.1:${server.port}`;
  const { stdout } = await run(process.execPath, ['verify.mjs', issuer, `${server.url}/.well-known/jwks.json`, token], { cwd: platformService });
  return JSON.parse(stdout.trim()) as { ok: boolean };
}

describe('school-auth/verifier imported by another package', () => {
  it('verifies a token of the running service, and refuses a tampered one', async () => {
    const response = await loginHttp(server, PASSWORD);
    expect(response.status).toBe(200);
    const token = ((await response.json()) as { access_token: string }).access_token;

    expect(await verifyFromPackage(token)).toMatchObject({ ok: true, acr: 'aal1' });
    const [header, payload] = token.split('.');
    const forged = `${header}.${payload}.${'A'.repeat(86)}`;
    expect(await verifyFromPackage(forged)).toEqual({ ok: false, code: 'ERR_JWS_SIGNATURE_VERIFICATION_FAILED' });
  });

  it('loads no server code: the entry point is dist/verifier, and it imports nothing outside it', async () => {
    const { stdout } = await run(process.execPath, ['--input-type=module', '-e', "console.log(import.meta.resolve('school-auth/verifier'))"], { cwd: platformService });
    expect(stdout.trim()).toMatch(/\/dist\/verifier\/index\.js$/);
  });
});
