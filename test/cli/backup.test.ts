import { copyFileSync, existsSync, mkdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { setImmediate as yieldToEvents } from 'node:timers/promises';
import { join } from 'node:path';
import SQLite from 'better-sqlite3';
import { describe, expect } from 'vitest';
import { cliTest as test, ok, parseJson, SLOW } from '../helpers/cli-workspace.js';

describe.concurrent('school-auth backup', () => {
  test('copies the SQLite database while the service writes: the copy is consistent, complete up to a point, and 0600', SLOW, async ({ ws }) => {
    const app = await ws.app();
    await app.seedSchool('school-0000');
    mkdirSync(join(ws.root, 'backups'));
    const file = join(ws.root, 'backups', 'copy.sqlite');

    // The service keeps writing (one school, then its audit event, at a time) during the backup.
    let writing = true;
    let written = 1;
    const writer = (async () => {
      while (writing) {
        await app.seedSchool(`school-${String(written++).padStart(4, '0')}`);
        // SQLite answers synchronously: let the child's output and exit be seen between writes.
        await yieldToEvents();
      }
    })();
    const backup = await ws.run(['backup', file]);
    writing = false;
    await writer;

    expect(written, 'the service wrote during the backup').toBeGreaterThan(2);
    expect(backup.stderr).toBe('');
    expect(ok(backup).stdout).toMatch(new RegExp(`^backup of .+school-auth\\.sqlite written to ${file.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')} \\(\\d+ bytes\\)\\n$`));
    expect(statSync(file).mode & 0o777).toBe(0o600);

    const copy = new SQLite(file, { readonly: true });
    try {
      expect(copy.pragma('integrity_check', { simple: true })).toBe('ok');
      expect(copy.pragma('foreign_key_check')).toEqual([]);
      // A snapshot: the schools written before some moment, every one of them, none after. In the
      // order written: past school-9999 the text order is not the number order.
      const schools = copy.prepare("select school_id from schools order by cast(substr(school_id, 8) as integer)").pluck().all() as string[];
      expect(schools.length).toBeGreaterThan(0);
      expect(schools.length).toBeLessThanOrEqual(written);
      expect(schools).toEqual(schools.map((_, index) => `school-${String(index).padStart(4, '0')}`));
      expect(copy.prepare('select count(*) from signing_keys').pluck().get()).toBe(1);
    } finally {
      copy.close();
    }

    // Restored as docs/operations.md says (the copy as DATA_DIR/school-auth.sqlite), it serves.
    const restored = join(ws.root, 'restored');
    mkdirSync(restored, { mode: 0o700 });
    copyFileSync(file, join(restored, 'school-auth.sqlite'));
    const schools = parseJson<unknown[]>(ok(await ws.run(['school', 'list', '--json'], { env: { DATA_DIR: restored } })));
    expect(schools.length).toBeGreaterThan(0);
  });

  test('never overwrites a file, and says so', SLOW, async ({ ws }) => {
    ok(await ws.run(['school', 'add', 'lincoln-high']));
    const file = join(ws.root, 'existing.sqlite');
    writeFileSync(file, 'keep me');
    const result = await ws.run(['backup', file]);
    expect(result).toMatchObject({ code: 1, stdout: '', stderr: `school-auth: ${file} already exists; backup never overwrites a file: name a new one\n` });
    expect(readFileSync(file, 'utf8')).toBe('keep me');
  });

  test('on PostgreSQL points to pg_dump (exit 1), and with no database yet says there is nothing to back up', SLOW, async ({ ws }) => {
    const file = join(ws.root, 'copy.sqlite');
    const postgres = await ws.run(['backup', file], { env: { DATABASE_URL: 'postgres://postgres@127.0.0.1:5432/postgres', ISSUER: 'https://auth.school.example' } });
    expect(postgres).toMatchObject({
      code: 1,
      stdout: '',
      stderr: 'school-auth: backup copies the SQLite database only; on PostgreSQL use pg_dump, e.g. pg_dump --format=custom --file=FILE "$DATABASE_URL" (docs/operations.md)\n',
    });
    const empty = await ws.run(['backup', file]);
    expect(empty).toMatchObject({ code: 1, stdout: '', stderr: `school-auth: there is no database at ${join(ws.dataDir, 'school-auth.sqlite')} (DATA_DIR) to back up\n` });
    expect(existsSync(file)).toBe(false);
  });
});
