import type { Clock } from '../../runtime/clock.js';
import { nowSeconds } from '../../runtime/clock.js';
import type { Config, JwtAlg } from '../../config/config.js';
import type { Db } from '../../db/database.js';
import { markSigningKeyRevoked, type SigningKeyRow } from '../../db/queries/signing-keys.js';
import { UsageError } from '../../errors.js';
import { CLI_CONTEXT, recordEvent } from '../events.js';
import { createSigningKey, describeSigningKeys } from './signing-keys.js';

interface KeyRevocation {
  readonly revoked: SigningKeyRow;
  /** The key that signs from now on, when the revoked one was signing; undefined otherwise. */
  readonly replacement: SigningKeyRow | undefined;
}

type RevocationContext = {
  readonly db: Db;
  readonly clock: Clock;
  readonly config: Config;
};

/**
 * Withdraws a signing key at once (`keys revoke`, after a leak). It stops signing and verifying,
 * and leaves the JWKS, on every instance within KEY_CACHE_SECONDS. When it was the signing key, a
 * new key of the same algorithm signs from now: no activation delay, since waiting would keep the
 * leaked key signing. Tokens it signed are refused from then on, so their holders sign in again.
 * The revocation, the new key and the audit event are one transaction.
 */
export async function revokeSigningKey(context: RevocationContext, kid: string): Promise<KeyRevocation> {
  const { clock, config } = context;
  return context.db.transaction().execute(async (trx) => {
    const scheduled = await describeSigningKeys(trx, config, clock);
    const target = scheduled.find(({ row }) => row.kid === kid);
    if (target === undefined) throw new UsageError(`no signing key ${JSON.stringify(kid)}; see the kids with: school-auth keys list`);
    const now = nowSeconds(clock);
    const revoked = await markSigningKeyRevoked(trx, kid, now);
    if (revoked === undefined) throw new UsageError(`signing key ${kid} is already revoked`);
    const replacement = target.state === 'active' ? await createSigningKey(trx, revoked.alg as JwtAlg, now, now, config.keyEncryption) : undefined;
    const detail = replacement === undefined ? `key ${kid} revoked` : `key ${kid} revoked; new key ${replacement.kid} signs now`;
    await recordEvent(trx, clock, CLI_CONTEXT, { type: 'keys.revoked', detail });
    return { revoked, replacement };
  });
}
