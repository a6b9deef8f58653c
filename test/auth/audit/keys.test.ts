import { createPrivateKey, type JsonWebKey } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { CHECKPOINT_TYPE } from '../../../src/auth/audit/checkpoint-signature.js';
import { createJwsSigner, signJwt } from '../../../src/auth/keys/jws.js';
import { revokeSigningKey } from '../../../src/auth/keys/key-revocation.js';
import { createSigningKey } from '../../../src/auth/keys/signing-keys.js';
import { sealBatch } from '../../../src/auth/audit/sealer.js';
import { verifyTrail } from '../../../src/auth/audit/verify-trail.js';
import { nowSeconds } from '../../../src/runtime/clock.js';
import { useTestApps } from '../../helpers/app.js';
import { recordEvents, sealAll, withEmptyTrail } from '../../helpers/audit.js';
import { TEST_DIALECTS } from '../../helpers/database.js';

describe.each(TEST_DIALECTS)('checkpoints and the signing keys on %s', (dialect) => {
  const open = useTestApps(dialect);

  it('checkpoints signed with a retired key still verify', async () => {
    const t = await withEmptyTrail(await open());
    const { db } = t.services;
    await recordEvents(t.services, 2, (s) => t.clock.advance(s));
    await sealAll(t.services);
    const first = (await t.services.keys.signer()).kid;
    await createSigningKey(db, t.config.jwtAlg, nowSeconds(t.clock), nowSeconds(t.clock));
    t.clock.advance(30 * 86_400);
    expect((await t.services.keys.jwks()).keys.map((key) => key.kid)).not.toContain(first);
    await recordEvents(t.services, 2, (s) => t.clock.advance(s));
    await sealAll(t.services);
    const kids = (await db.selectFrom('audit_checkpoints').select('kid').orderBy('seq').execute()).map((row) => row.kid);
    expect(kids[0]).toBe(first);
    expect(kids[1]).not.toBe(first);
    expect(await verifyTrail(db)).toMatchObject({ ok: true, report: { events: 4, checkpoints: 2, withdrawnLater: 0 } });
  });

  it('a key withdrawn later is reported apart; no checkpoint is signed with a key already withdrawn', async () => {
    // A key cache longer than the heartbeat's minute: waiting it out would leave a gap in checkpoints.
    const t = await withEmptyTrail(await open({ KEY_CACHE_SECONDS: '3600' }));
    const { db } = t.services;
    await recordEvents(t.services, 2, (s) => t.clock.advance(s));
    await sealAll(t.services);
    const leaked = (await t.services.keys.signer()).kid;
    t.clock.advance(1);
    await revokeSigningKey({ db, clock: t.clock, config: t.config }, leaked);
    // This instance's key cache still holds the leaked key: the sealer must not sign with it, nor wait.
    expect((await t.services.keys.signer()).kid).toBe(leaked);
    t.clock.advance(2);
    expect(await sealBatch(t.services)).toMatchObject({ seq: 3 });
    expect((await t.services.keys.signer()).kid).not.toBe(leaked);
    const kids = (await db.selectFrom('audit_checkpoints').select('kid').orderBy('seq').execute()).map((row) => row.kid);
    expect(kids[1]).not.toBe(leaked);
    expect(await verifyTrail(db)).toMatchObject({ ok: true, report: { events: 3, checkpoints: 2, withdrawnLater: 1 } });

    // Whoever leaked the key re-signs the newest checkpoint with it: made after the withdrawal, refused.
    const row = await db.selectFrom('audit_checkpoints').selectAll().where('seq', '=', 3).executeTakeFirstOrThrow();
    const stored = await db.selectFrom('signing_keys').selectAll().where('kid', '=', leaked).executeTakeFirstOrThrow();
    const privateKey = createPrivateKey({ key: JSON.parse(stored.private_jwk) as JsonWebKey, format: 'jwk' });
    const claims = { seq: row.seq, hash: row.hash, sealed_at: row.sealed_at, covers_before: row.covers_before, previous: row.previous };
    const jws = await signJwt(createJwsSigner(leaked, stored.alg, privateKey, CHECKPOINT_TYPE), claims);
    await db.updateTable('audit_checkpoints').set({ kid: leaked, jws }).where('seq', '=', 3).execute();
    expect(await verifyTrail(db)).toEqual({ ok: false, problem: `checkpoint seq 3: it is signed with key ${leaked}, withdrawn before the checkpoint's time` });
  });
});
