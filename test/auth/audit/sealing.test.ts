import { compactVerify, createLocalJWKSet, decodeProtectedHeader } from 'jose';
import { describe, expect, it } from 'vitest';
import { GENESIS_HASH, chainHash, sealedView } from '../../../src/auth/audit/canonical-event.js';
import { CHECKPOINT_TYPE } from '../../../src/auth/audit/checkpoint-signature.js';
import { WRITE_SETTLE_MS } from '../../../src/auth/audit/checkpoint-timeline.js';
import { sealBatch } from '../../../src/auth/audit/sealer.js';
import { verifyTrail } from '../../../src/auth/audit/verify-trail.js';
import { CLI_CONTEXT, recordEvent } from '../../../src/auth/events.js';
import { useTestApps } from '../../helpers/app.js';
import { recordEvents, sealAll, withEmptyTrail } from '../../helpers/audit.js';
import { TEST_DIALECTS } from '../../helpers/database.js';

describe.each(TEST_DIALECTS)('the audit sealer on %s', (dialect) => {
  const open = useTestApps(dialect);

  it('gives events consecutive seqs and chained hashes, and ends each batch with a checkpoint the JWKS verifies', async () => {
    const t = await withEmptyTrail(await open());
    const { db } = t.services;
    await recordEvents(t.services, 5, (s) => t.clock.advance(s));
    expect(await sealAll(t.services, 2)).toBe(3);

    const events = await db.selectFrom('events').selectAll().orderBy('id').execute();
    expect(events.map((e) => e.seq)).toEqual([1, 2, 3, 4, 5]);
    let previous = GENESIS_HASH;
    for (const event of events) {
      expect(event.hash).toBe(chainHash(previous, sealedView(event, event.seq ?? 0)));
      previous = event.hash ?? '';
    }
    const checkpoints = await db.selectFrom('audit_checkpoints').selectAll().orderBy('seq').execute();
    expect(checkpoints.map((c) => [c.seq, c.previous])).toEqual([[2, 0], [4, 2], [5, 4]]);
    expect(checkpoints.at(-1)?.hash).toBe(previous);
    const jwks = createLocalJWKSet(await t.services.keys.jwks());
    for (const [index, checkpoint] of checkpoints.entries()) {
      expect(decodeProtectedHeader(checkpoint.jws).typ).toBe(CHECKPOINT_TYPE);
      const { payload } = await compactVerify(checkpoint.jws, jwks);
      expect(JSON.parse(new TextDecoder().decode(payload))).toEqual({
        seq: checkpoint.seq,
        hash: checkpoint.hash,
        sealed_at: checkpoint.sealed_at,
        covers_before: checkpoint.covers_before,
        previous: checkpoint.previous,
        batch_at: checkpoint.sealed_at,
        previous_at: checkpoints[index - 1]?.sealed_at ?? 0,
        stalled: null,
      });
    }
    expect(await verifyTrail(db)).toEqual({ ok: true, report: { events: 5, checkpoints: 3, withdrawnLater: 0, prunedThrough: 0, shipped: undefined } });
  });

  it('verify passes before anything is sealed', async () => {
    const t = await withEmptyTrail(await open());
    expect(await verifyTrail(t.services.db)).toEqual({ ok: true, report: { events: 0, checkpoints: 0, withdrawnLater: 0, prunedThrough: 0, shipped: undefined } });
    await recordEvents(t.services, 2, (s) => t.clock.advance(s));
    expect(await verifyTrail(t.services.db)).toMatchObject({ ok: true, report: { events: 0, checkpoints: 0 } });
  });

  it('promises completeness only up to the settle margin, or the oldest event left unsealed', async () => {
    const t = await withEmptyTrail(await open());
    await recordEvents(t.services, 3, (s) => t.clock.advance(s));
    const first = await sealBatch(t.services, { limit: 1 });
    const oldestLeft = await t.services.db.selectFrom('events').select('at').where('seq', 'is', null).orderBy('id').executeTakeFirstOrThrow();
    expect(first?.covers_before).toBe(Math.min(t.clock.now() - WRITE_SETTLE_MS, oldestLeft.at));
    expect(await sealBatch(t.services)).toMatchObject({ covers_before: t.clock.now() - WRITE_SETTLE_MS, previous: 1, seq: 3 });
    expect(await sealBatch(t.services)).toBeUndefined();
  });

  it('a failure in the middle of a batch leaves no gap and no duplicate', async () => {
    const t = await withEmptyTrail(await open());
    const { db } = t.services;
    await recordEvents(t.services, 6, (s) => t.clock.advance(s));
    await sealBatch(t.services, { limit: 2 });
    await expect(sealBatch(t.services, { failAfter: 3 })).rejects.toThrow(/injected/);
    const afterFailure = await db.selectFrom('events').select('seq').where('seq', 'is not', null).orderBy('seq').execute();
    expect(afterFailure.map((e) => e.seq)).toEqual([1, 2]);
    expect((await db.selectFrom('audit_sealer').select(['seq', 'checkpoint_seq']).executeTakeFirstOrThrow())).toEqual({ seq: 2, checkpoint_seq: 2 });

    await sealAll(t.services);
    const sealed = await db.selectFrom('events').select('seq').orderBy('id').execute();
    expect(sealed.map((e) => e.seq)).toEqual([1, 2, 3, 4, 5, 6]);
    expect((await verifyTrail(db)).ok).toBe(true);
  });

  it('sealers running at once take turns: one chain, no gap, no duplicate', async () => {
    const t = await withEmptyTrail(await open());
    const writing = recordEvents(t.services, 40, () => undefined);
    const sealers = Array.from({ length: 4 }, async () => {
      for (let round = 0; round < 10; round += 1) await sealBatch(t.services, { limit: 3 });
    });
    await Promise.all([writing, ...sealers]);
    await sealAll(t.services);
    const seqs = (await t.services.db.selectFrom('events').select('seq').orderBy('seq').execute()).map((e) => e.seq);
    expect(seqs).toEqual(Array.from({ length: 40 }, (_, i) => i + 1));
    expect((await verifyTrail(t.services.db)).ok).toBe(true);
  });

  // Only PostgreSQL has concurrent writers whose commits can overtake each other.
  if (dialect === 'postgres') it('an event that commits after a later one is sealed after it, and verifies', async () => {
    const t = await withEmptyTrail(await open());
    const { db } = t.services;
    await db.transaction().execute(async (trx) => {
      await recordEvent(trx, t.clock, CLI_CONTEXT, { type: 'keys.rotated', detail: 'slow transaction' });
      await recordEvent(db, t.clock, CLI_CONTEXT, { type: 'admin.created', detail: 'quick' });
      await sealAll(t.services);
    });
    await sealAll(t.services);
    const events = await db.selectFrom('events').select(['id', 'seq', 'detail']).orderBy('seq').execute();
    expect(events.map((e) => e.detail)).toEqual(['quick', 'slow transaction']);
    expect((events[0]?.id ?? 0) > (events[1]?.id ?? 0)).toBe(true);
    expect(await verifyTrail(db)).toMatchObject({ ok: true, report: { events: 2, checkpoints: 2 } });
  });
});
