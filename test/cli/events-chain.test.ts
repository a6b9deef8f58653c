import { spawnSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { sql } from 'kysely';
import { describe, expect } from 'vitest';
import type { Db } from '../../src/db/database.js';
import { personalDigest } from '../../src/db/event-digest.js';
import { REPO_ROOT } from '../helpers/cli-run.js';
import { cliTest as test, ok, parseJson, SLOW, type Workspace } from '../helpers/cli-workspace.js';
import { sealAll, withEmptyTrail } from '../helpers/audit.js';

const PASSWORD = 'correct horse battery staple';
/** Usernames that test the canonical form: control characters, non-ASCII, astral, a forged line. */
const NAMES = ['zoë', '名前', 'emoji 😀', '\u001b]0;pwned\u0007', 'line\nbreak', 'del\u007f', 'abc\u202eevil', 'quote " and \\'];

/** The recipe of docs/audit-trail.md, exactly as published. */
function runRecipe(input: string, ...args: string[]) {
  const doc = readFileSync(join(REPO_ROOT, 'docs', 'audit-trail.md'), 'utf8');
  const recipe = /```python\n([\s\S]*?)```/.exec(doc)?.[1];
  if (recipe === undefined) throw new Error('no Python recipe in docs/audit-trail.md');
  expect(recipe.trimEnd().split('\n').length).toBeLessThanOrEqual(15);
  return spawnSync('python3', ['-c', recipe, ...args], { input, encoding: 'utf8' });
}

/** Edits an event's username as a forger would: its personal digest recomputed from the stored salt. */
async function setUsername(db: Db, seq: number, username: string): Promise<void> {
  const event = await db.selectFrom('events').selectAll().where('seq', '=', seq).executeTakeFirstOrThrow();
  const personal_digest = personalDigest(event.personal_salt ?? '', { ...event, username });
  await db.updateTable('events').set({ username, personal_digest }).where('id', '=', event.id).execute();
}

/** Failed logins with awkward usernames, then everything sealed (by this process, as `serve` would). */
async function sealedWorkspace(ws: Workspace) {
  const app = await withEmptyTrail(await ws.app());
  await app.seedSchool('lincoln-high');
  for (const username of NAMES) expect((await app.login({ school_id: 'lincoln-high', username, password: PASSWORD })).statusCode).toBe(401);
  await sealAll(app.services);
  return app;
}

describe.concurrent('school-auth events verify, export and the published recipe', () => {
  test('verify passes, export streams every field with seq and hash, and the recipe re-checks it independently', SLOW, async ({ ws }) => {
    const app = await sealedWorkspace(ws);
    expect(ok(await ws.run(['events', 'verify'])).stdout).toBe('ok: 9 sealed events and 1 checkpoint checked\n');

    const exported = ok(await ws.run(['events', 'export', '--since', '1'])).stdout;
    const lines = exported.trimEnd().split('\n').map((line) => JSON.parse(line) as Record<string, unknown>);
    expect(lines.map((line) => line.seq)).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9]);
    // The sealed fields (the personal ones through `personal`, their digest), the personal fields with their salt, and the hash.
    expect(Object.keys(lines[1] ?? {}).sort()).toEqual(['admin_id', 'at', 'detail', 'hash', 'id', 'ip', 'personal', 'personal_salt', 'school_id', 'seq', 'session_id', 'type', 'user_agent', 'username']);
    expect(lines.slice(1).map((line) => line.username)).toEqual(NAMES);

    const checkpoint = await app.services.db.selectFrom('audit_checkpoints').selectAll().executeTakeFirstOrThrow();
    const recipe = runRecipe(exported);
    expect(recipe.stderr).toBe('');
    expect(recipe.stdout).toBe(`chain ok through seq 9: ${checkpoint.hash}\n`);

    const tail = ok(await ws.run(['events', 'export', '--since', '4', '--until', '6'])).stdout;
    expect(tail.trimEnd().split('\n').map((line) => (JSON.parse(line) as { seq: number }).seq)).toEqual([4, 5, 6]);
    expect(runRecipe(tail, String(lines[2]?.hash)).status).toBe(0);

    await sql`update events set username = 'mallory' where seq = 3`.execute(app.services.db);
    const tampered = await ws.run(['events', 'verify']);
    expect(tampered.code).toBe(1);
    expect(tampered.stdout).toMatch(/^TAMPERED: event seq 3 \(id \d+, login\.failure at \S+\) was edited: its personal fields no longer match their digest/);
    const rechecked = runRecipe(ok(await ws.run(['events', 'export', '--since', '1'])).stdout);
    expect(rechecked.status).toBe(1);
    expect(rechecked.stderr).toBe('line 3: event seq 3 does not match its personal digest: edited\n');

    // A forger recomputes the digest from the stored salt: the chain names the edit.
    await setUsername(app.services.db, 3, 'mallory');
    expect((await ws.run(['events', 'verify'])).stdout).toMatch(/^TAMPERED: event seq 3 \(id \d+, login\.failure at \S+\) was edited: it no longer matches its hash/);
    const forged = runRecipe(ok(await ws.run(['events', 'export', '--since', '1'])).stdout);
    expect(forged.stderr).toBe('line 3: event seq 3 does not match its hash: edited or reordered\n');
  });

  test('after an erasure, verify passes and the recipe re-checks both forms', SLOW, async ({ ws }) => {
    const app = await withEmptyTrail(await ws.app());
    const { db } = app.services;
    const alice = { school_id: 'lincoln-high', username: 'alice', password: PASSWORD };
    const client = { ip: '198.51.100.7', userAgent: 'Alice Browser' };
    await app.seedSchool('lincoln-high');
    await app.seedAdmin('lincoln-high', 'alice', PASSWORD);
    expect((await app.login({ ...alice, password: 'wrong password' }, client)).statusCode).toBe(401);
    // Events written before migration 018 are sealed in the earlier form, their personal fields themselves.
    await sql`update events set personal_salt = null, personal_digest = null`.execute(db);
    await sealAll(app.services);
    await app.signIn(alice, client);
    await sealAll(app.services);
    const earlier = await db.selectFrom('events').select('seq').where('admin_id', 'is not', null).where('personal_digest', 'is', null).orderBy('seq').execute();
    expect(earlier.length).toBeGreaterThan(0);

    ok(await ws.run(['admin', 'delete', '--school', 'lincoln-high', '--username', 'alice', '--erase']));
    await sealAll(app.services);
    expect(ok(await ws.run(['events', 'verify'])).stdout).toMatch(/^ok: \d+ sealed events/);
    const lines = ok(await ws.run(['events', 'export', '--since', '1'])).stdout.trimEnd().split('\n').map((line) => JSON.parse(line) as Record<string, unknown>);
    const erased = lines.filter((line) => line.erased === true);
    expect(erased.map((line) => [line.username, line.ip, line.user_agent, line.detail, line.personal_salt ?? null])).toEqual(erased.map(() => [null, null, null, null, null]));
    expect(erased.filter((line) => !('personal' in line)).map((line) => line.seq)).toEqual(earlier.map((row) => row.seq));
    expect(erased.some((line) => 'personal' in line)).toBe(true);
    const record = lines.find((line) => line.type === 'admin.erased');
    expect(record?.detail).toMatch(new RegExp(`^${erased.length} events erased; earlier-form seqs ${earlier.map((row) => row.seq).join(',')}; sha256 [0-9a-f]{64}$`));
    expect(JSON.stringify(lines)).not.toMatch(/alice|198\.51\.100\.7|Alice Browser/);

    const newest = await db.selectFrom('audit_checkpoints').selectAll().orderBy('seq', 'desc').executeTakeFirstOrThrow();
    const recipe = runRecipe(`${lines.map((line) => JSON.stringify(line)).join('\n')}\n`);
    expect(recipe.stderr).toBe('');
    expect(recipe.stdout).toBe(`chain ok through seq ${newest.seq}: ${newest.hash}\n`);
  });

  test('export takes a time too; bad bounds are refused with a clear message', SLOW, async ({ ws }) => {
    await sealedWorkspace(ws);
    const all = ok(await ws.run(['events', 'export', '--since', '2000-01-01'])).stdout.trimEnd().split('\n');
    expect(all).toHaveLength(9);
    expect(ok(await ws.run(['events', 'export', '--since', '2000-01-01', '--until', '2000-01-02T00:00:00Z'])).stdout).toBe('');
    for (const bad of ['0', 'yesterday', '2026-13-45']) {
      const refused = await ws.run(['events', 'export', '--since', bad]);
      expect(refused.code).toBe(1);
      expect(refused.stderr).toMatch(/^school-auth: --since takes a sequence number/);
    }
    expect((await ws.run(['events', 'export'])).code).not.toBe(0);
  });

  test('the listing filters by school, username, type and time', SLOW, async ({ ws }) => {
    await sealedWorkspace(ws);
    const list = async (args: string[]) => parseJson<{ type: string; username: string | null }[]>(ok(await ws.run(['events', '--json', ...args])));
    expect((await list(['--type', 'login.failure'])).length).toBe(NAMES.length);
    expect(await list(['--username', 'zoë'])).toMatchObject([{ type: 'login.failure', username: 'zoë' }]);
    expect((await list(['--school', 'Lincoln-High', '--type', 'school.created'])).length).toBe(1);
    expect((await list(['--school', 'other-school'])).length).toBe(0);
    const future = new Date(Date.now() + 3_600_000).toISOString();
    expect((await list(['--since', future])).length).toBe(0);
    expect((await list(['--until', future])).length).toBe(NAMES.length + 1);
    const refused = await ws.run(['events', '--since', 'last week']);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(/^school-auth: --since takes an ISO 8601 time/);
  });

  test('verify --against the shipped checkpoints catches a history rewritten and signed again', SLOW, async ({ ws }) => {
    const app = await sealedWorkspace(ws);
    const checkpoint = await app.services.db.selectFrom('audit_checkpoints').selectAll().executeTakeFirstOrThrow();
    const shipped = join(ws.root, 'shipped.log');
    writeFileSync(shipped, `{"level":30,"msg":"request"}\n${JSON.stringify({ level: 30, audit_checkpoint: { ...checkpoint }, msg: 'audit checkpoint' })}\n`);
    expect(ok(await ws.run(['events', 'verify', '--against', shipped])).stdout).toMatch(/ok: 1 shipped checkpoint in .*shipped\.log match the database/);

    // Whoever holds the database and the signing key re-seals an edited history: it verifies alone.
    const { db } = app.services;
    await setUsername(db, 2, 'nobody');
    await sql`update events set seq = null, hash = null`.execute(db);
    await sql`delete from audit_checkpoints`.execute(db);
    await sql`update audit_sealer set seq = 0, hash = ${'0'.repeat(64)}, checkpoint_seq = 0`.execute(db);
    await sealAll(app.services);
    expect(ok(await ws.run(['events', 'verify'])).code).toBe(0);
    const caught = await ws.run(['events', 'verify', '--against', shipped]);
    expect(caught.code).toBe(1);
    expect(caught.stdout).toMatch(/^TAMPERED: checkpoint seq 9 differs from the copy in .*shipped\.log: the chain up to it was rewritten and signed again/);
    const missing = await ws.run(['events', 'verify', '--against', join(ws.root, 'nowhere.log')]);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toMatch(/^school-auth: --against: no file/);
  });
});
