import { calculateJwkThumbprint, compactVerify, importJWK, type JWK } from 'jose';
import type { Db } from '../../db/database.js';
import { publicKeyByKid } from '../../db/queries/audit-reading.js';
import type { CheckpointRow } from '../../db/queries/audit-sealing.js';
import { createJwsSigner, signJwt } from '../keys/jws.js';
import type { SigningKeys } from '../keys/signing-keys.js';

/** The JWS `typ` of a checkpoint: never accepted where an access token (`at+jwt`) is expected. */
export const CHECKPOINT_TYPE = 'audit-checkpoint+jws';

/**
 * What a checkpoint's signature covers. The last three came with the heartbeat (the newest
 * checkpoint signed again each minute): checkpoints made before it have none of them.
 */
export interface CheckpointClaims {
  readonly seq: number;
  readonly hash: string;
  /** When this version was signed: the newest checkpoint is signed again each minute. */
  readonly sealed_at: number;
  readonly covers_before: number;
  readonly previous: number;
  /** When its events were sealed (its first version's `sealed_at`). */
  readonly batch_at?: number;
  /** The `sealed_at` of the checkpoint before, in the version this one followed; 0 for the first. */
  readonly previous_at?: number;
  /** The stretch without checkpoints while the sealer ran that this batch ended, `[from, until]`. */
  readonly stalled?: readonly [number, number] | null;
}

interface SignedCheckpoint {
  readonly kid: string;
  readonly jws: string;
  /** The signer's public key, shipped with the log line so a copy verifies on its own. */
  readonly jwk: JWK | undefined;
}

/**
 * A signer for checkpoints with the service's current signing key (the one the JWKS publishes).
 * Taken before a batch's transaction: loading keys queries the database, which on SQLite's single
 * connection would wait for that very transaction.
 */
export async function checkpointSigner(keys: SigningKeys): Promise<CheckpointSigner> {
  const current = await keys.signer();
  const signer = createJwsSigner(current.kid, current.alg, current.privateKey, CHECKPOINT_TYPE);
  const jwk = (await keys.jwks()).keys.find((key) => key.kid === current.kid);
  return { kid: current.kid, sign: async (claims) => ({ kid: current.kid, jws: await signJwt(signer, { ...claims }), jwk }) };
}

/** A checkpoint as signed and logged, with how many events it sealed (0: the newest one signed again). */
export type SealedCheckpoint = CheckpointClaims & SignedCheckpoint & { readonly events: number };

export interface CheckpointSigner {
  readonly kid: string;
  sign(claims: CheckpointClaims): Promise<SignedCheckpoint>;
}

type SignatureCheck =
  | { readonly valid: true; readonly claims: CheckpointClaims; readonly withdrawnLater: boolean }
  | { readonly valid: false; readonly problem: string };

/**
 * Verifies a checkpoint JWS with the stored public key of its `kid`, whatever that key's state.
 * A key withdrawn (`keys revoke`) before the checkpoint's time cannot have signed it honestly; one
 * withdrawn afterwards still verifies, but is reported (`withdrawnLater`): whoever leaked it could
 * have signed this too, so only a later checkpoint or a shipped copy vouches for it.
 */
export async function checkCheckpointSignature(db: Db, jws: string, kid: string): Promise<SignatureCheck> {
  const stored = await publicKeyByKid(db, kid);
  if (stored === undefined) return { valid: false, problem: `its signing key ${kid} is not in the database` };
  const jwk = JSON.parse(stored.public_jwk) as JWK;
  if ((await calculateJwkThumbprint(jwk)) !== kid) return { valid: false, problem: `the stored public key of ${kid} is not the key of that id` };
  let claims: CheckpointClaims;
  try {
    const verified = await compactVerify(jws, await importJWK(jwk, stored.alg), { algorithms: [stored.alg] });
    if (verified.protectedHeader.kid !== kid || verified.protectedHeader.typ !== CHECKPOINT_TYPE) return { valid: false, problem: 'its JWS header names another key or type' };
    claims = JSON.parse(new TextDecoder().decode(verified.payload)) as CheckpointClaims;
  } catch {
    return { valid: false, problem: `its signature does not verify with key ${kid}` };
  }
  // revoked_at is in whole seconds: a checkpoint made within the revocation's second counts as before it.
  if (stored.revoked_at !== null && (stored.revoked_at + 1) * 1000 <= claims.sealed_at) {
    return { valid: false, problem: `it is signed with key ${kid}, withdrawn before the checkpoint's time` };
  }
  return { valid: true, claims, withdrawnLater: stored.revoked_at !== null };
}

/** The row's columns must be exactly what was signed. */
export function rowMatchesClaims(row: CheckpointRow, claims: CheckpointClaims): boolean {
  return (
    row.seq === claims.seq &&
    row.hash === claims.hash &&
    row.sealed_at === claims.sealed_at &&
    row.covers_before === claims.covers_before &&
    row.previous === claims.previous
  );
}
