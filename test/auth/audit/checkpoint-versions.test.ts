import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { checkpointSigner, type SealedCheckpoint } from '../../../src/auth/audit/checkpoint-signature.js';
import { sealBatch } from '../../../src/auth/audit/sealer.js';
import type { Db } from '../../../src/db/database.js';
import { useTestApps, type TestApp } from '../../helpers/app.js';
import { quietMinutes, recordEvents, sealAll, verdict, withEmptyTrail } from '../../helpers/audit.js';
import { TEST_DIALECTS } from '../../helpers/database.js';

const iso = (ms: number) => new Date(ms).toISOString();
const dir = mkdtempSync(join(tmpdir(), 'school-auth-versions-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** The `audit checkpoint` log lines of these checkpoints, as the sealer loop writes them. */
function shipped(name: string, checkpoints: SealedCheckpoint[]): string {
  const file = join(dir, `${name}-${Math.random().toString(36).slice(2)}.log`);
  writeFileSync(file, checkpoints.map(({ events, ...checkpoint }) => `${JSON.stringify({ level: 30, audit_checkpoint: checkpoint, events, msg: 'audit checkpoint' })}\n`).join(''));
  return file;
}

/** Puts a stored checkpoint back to an earlier signed version of it, as someone with database access could. */
async function putBack(db: Db, version: SealedCheckpoint): Promise<void> {
  const { sealed_at, covers_before, kid, jws } = version;
  await db.updateTable('audit_checkpoints').set({ sealed_at, covers_before, kid, jws }).where('seq', '=', version.seq).execute();
}

describe.each(TEST_DIALECTS)('versions of a checkpoint on %s', (dialect) => {
  const open = useTestApps(dialect);

  /** Three events sealed (checkpoint seq 3), then signed again three times a minute apart; every version returned. */
  async function resignedTrail(): Promise<{ t: TestApp; db: Db; since: number; versions: SealedCheckpoint[] }> {
    const t = await withEmptyTrail(await open());
    const since = t.clock.now();
    await recordEvents(t.services, 3, (s) => t.clock.advance(s));
    const versions: SealedCheckpoint[] = [];
    for (let round = 0; round < 4; round += 1, t.clock.advance(60)) {
      const checkpoint = await sealBatch(t.services, { runningSince: since });
      if (checkpoint === undefined) throw new Error('no checkpoint');
      versions.push(checkpoint);
    }
    expect(versions.map((v) => [v.seq, v.events])).toEqual([[3, 3], [3, 0], [3, 0], [3, 0]]);
    return { t, db: t.services.db, since, versions };
  }

  it('every shipped version matches; the newest put back to an earlier one shows against the shipped copies', async () => {
    const { db, versions } = await resignedTrail();
    const file = shipped('all', versions);
    expect(await verdict(db, file)).toBe('ok');
    const [first, second] = versions;
    if (first === undefined || second === undefined) throw new Error('versions missing');
    await putBack(db, first);
    // The database alone cannot tell: the row is an earlier version the service signed.
    expect(await verdict(db)).toBe('ok');
    expect(await verdict(db, file)).toBe(
      `checkpoint seq 3 was put back to an earlier version: the database holds the one sealed at ${iso(first.sealed_at)}, ${file} a later one sealed at ${iso(second.sealed_at)}`,
    );
  });

  it('an older checkpoint put back to an earlier version shows from the database alone', async () => {
    const { t, db, since, versions } = await resignedTrail();
    await recordEvents(t.services, 1, () => undefined);
    expect(await sealBatch(t.services, { runningSince: since })).toMatchObject({ seq: 4, previous_at: versions[3]?.sealed_at });
    const first = versions[0];
    if (first === undefined) throw new Error('versions missing');
    await putBack(db, first);
    expect(await verdict(db)).toBe(
      `checkpoint seq 3 was put back to another version of it: checkpoint seq 4 was signed after the one sealed at ${iso(versions[3]?.sealed_at ?? 0)}, ` +
        `the database holds the one sealed at ${iso(first.sealed_at)}`,
    );
  });

  it('checkpoints made before the heartbeat keep verifying after an upgrade, with no gap named before it', async () => {
    const t = await withEmptyTrail(await open());
    const { db } = t.services;
    await recordEvents(t.services, 3, (s) => t.clock.advance(s));
    await sealAll(t.services, 2);
    // As an earlier version signed them: the five claims of its checkpoints, nothing more.
    const signer = await checkpointSigner(t.services.keys);
    for (const row of await db.selectFrom('audit_checkpoints').selectAll().execute()) {
      const { seq, hash, sealed_at, covers_before, previous } = row;
      const { kid, jws } = await signer.sign({ seq, hash, sealed_at, covers_before, previous });
      await db.updateTable('audit_checkpoints').set({ kid, jws }).where('seq', '=', seq).execute();
    }
    const before = await db.selectFrom('audit_checkpoints').select(['seq', 'sealed_at']).orderBy('seq').execute();
    expect(await verdict(db)).toBe('ok');

    t.clock.advance(3 * 86_400);
    const upgraded = t.clock.now();
    await quietMinutes(t, 10, upgraded);
    const newest = await db.selectFrom('audit_checkpoints').select('jws').where('seq', '=', 3).executeTakeFirstOrThrow();
    expect(JSON.parse(Buffer.from(newest.jws.split('.')[1] ?? '', 'base64url').toString())).toMatchObject({
      sealed_at: t.clock.now(),
      batch_at: before[1]?.sealed_at,
      previous_at: before[0]?.sealed_at,
      stalled: null,
    });
    await recordEvents(t.services, 1, () => undefined);
    await sealBatch(t.services, { runningSince: upgraded });
    expect(await verdict(db)).toBe('ok');
  });
});
