/** `school-auth scim token create | list | revoke`, against the app opened on the same data, on each dialect. */
import { describe, expect } from 'vitest';
import type { InProcessApp } from '../helpers/cli-app.js';
import type { CliResult } from '../helpers/cli-run.js';
import { cliTest as test, ISO_TIME, ok, parseJson, SLOW, type Workspace } from '../helpers/cli-workspace.js';
import { createPostgresDatabase, TEST_DIALECTS } from '../helpers/database.js';

const TOKEN = /scim_[A-Za-z0-9_-]{43}(?![A-Za-z0-9_-])/g;
const DIGEST = /[0-9a-f]{64}/i;

const everything = (result: CliResult) => `${result.stdout}${result.stderr}`;

describe.each(TEST_DIALECTS)('school-auth scim token on %s', (dialect) => {
  /** `body` with an in-process app on this dialect's database (PostgreSQL: a database of its own, dropped after). */
  async function withDatabase(ws: Workspace, body: (app: InProcessApp, run: (args: readonly string[]) => Promise<CliResult>) => Promise<void>) {
    const database = dialect === 'postgres' ? await createPostgresDatabase() : undefined;
    const env: Record<string, string> = database === undefined ? {} : { DATABASE_URL: database.url, ISSUER: 'https://auth.test' };
    const app = await ws.openApp(env);
    try {
      await app.seedSchool('lincoln-high');
      await body(app, (args) => ws.run(args, { env }));
    } finally {
      await app.close();
      await database?.drop();
    }
  }

  const usersWith = (app: InProcessApp, token: string) => app.app.inject({ method: 'GET', url: '/scim/v2/Users', headers: { authorization: `Bearer ${token}` } });

  test('create prints the token once; list never shows it or its digest; the token works until revoked', SLOW, async ({ ws }) => {
    await withDatabase(ws, async (app, run) => {
      const created = ok(await run(['scim', 'token', 'create', '--school', 'lincoln-high', '--label', 'Entra ID']));
      const printed = everything(created).match(TOKEN) ?? [];
      expect(printed).toHaveLength(1);
      const token = printed[0] ?? '';
      const id = /^SCIM token (\S+) created for school "lincoln-high"/.exec(created.stdout)?.[1] ?? '';
      expect(id).not.toBe('');
      expect(created.stdout).toBe(`SCIM token ${id} created for school "lincoln-high"; the token (shown once, give it to the directory):\n${token}\n`);
      const { token_hash: digest } = await app.services.db.selectFrom('scim_tokens').select('token_hash').where('id', '=', id).executeTakeFirstOrThrow();
      expect(digest).not.toContain(token);

      const listedJson = ok(await run(['scim', 'token', 'list', '--json']));
      expect(parseJson(listedJson)).toEqual([{ id, school: 'lincoln-high', label: 'Entra ID', created_at: expect.stringMatching(ISO_TIME) as string, last_used_at: null }]);
      const listings = [listedJson, ok(await run(['scim', 'token', 'list'])), ok(await run(['scim', 'token', 'list', '--school', 'lincoln-high', '--json']))];
      expect(everything(listings[1]!)).toContain(id);

      // The directory's first request, on the app serving the same data.
      const first = await usersWith(app, token);
      expect(first.statusCode, first.body).toBe(200);
      expect(first.json()).toMatchObject({ totalResults: 0, Resources: [] });
      const used = parseJson<{ last_used_at: string | null }[]>(ok(await run(['scim', 'token', 'list', '--json'])));
      expect(used[0]?.last_used_at).toMatch(ISO_TIME);

      const events = ok(await run(['events', '--json']));
      expect(events.stdout).toContain('scim.token_created');
      for (const output of [...listings, events]) {
        expect(everything(output)).not.toContain(token.slice('scim_'.length));
        expect(everything(output)).not.toContain(digest);
      }
      // The audit trail may hold chain hashes; a listing of tokens holds no 64-hex string at all.
      for (const output of listings) expect(everything(output)).not.toMatch(DIGEST);

      const revoked = ok(await run(['scim', 'token', 'revoke', id]));
      expect(revoked.stdout).toBe(`SCIM token ${id} revoked\n`);
      const refused = await usersWith(app, token);
      expect(refused.statusCode).toBe(401);
      expect(refused.headers['www-authenticate']).toBe('Bearer realm="scim"');
      expect(parseJson(ok(await run(['scim', 'token', 'list', '--json'])))).toEqual([]);
      expect(ok(await run(['scim', 'token', 'list'])).stdout).toBe('no SCIM tokens\n');
    });
  });

  test('revoke of an unknown id and create for an unknown school fail, naming what is missing', SLOW, async ({ ws }) => {
    await withDatabase(ws, async (app, run) => {
      const unknownId = await run(['scim', 'token', 'revoke', '0b7c2a4e-0000-4000-8000-000000000000']);
      expect(unknownId.code).toBe(1);
      expect(unknownId.stdout).toBe('');
      expect(unknownId.stderr).toBe('school-auth: SCIM token "0b7c2a4e-0000-4000-8000-000000000000" does not exist; see: school-auth scim token list\n');

      const unknownSchool = await run(['scim', 'token', 'create', '--school', 'nowhere-high', '--label', 'Entra ID']);
      expect(unknownSchool.code).toBe(1);
      expect(unknownSchool.stdout).toBe('');
      expect(unknownSchool.stderr).toMatch(/^school-auth: school "nowhere-high" does not exist/);
      expect(everything(unknownSchool)).not.toMatch(TOKEN);

      const badLabel = await run(['scim', 'token', 'create', '--school', 'lincoln-high', '--label', 'x'.repeat(101)]);
      expect(badLabel.code).toBe(1);
      expect(badLabel.stderr).toMatch(/--label/);
      expect(await app.services.db.selectFrom('scim_tokens').select('id').execute()).toEqual([]);

      // A token revoked twice: the second time it is unknown.
      const created = ok(await run(['scim', 'token', 'create', '--school', 'lincoln-high']));
      const id = /^SCIM token (\S+) created/.exec(created.stdout)?.[1] ?? '';
      ok(await run(['scim', 'token', 'revoke', id]));
      const again = await run(['scim', 'token', 'revoke', id]);
      expect(again.code).toBe(1);
      expect(again.stderr).toContain(`SCIM token "${id}" does not exist`);
    });
  });
});
