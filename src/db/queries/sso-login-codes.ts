import type { Insertable, Selectable } from 'kysely';
import type { Db } from '../database.js';
import type { SsoLoginCodesTable } from '../schema/sso-login-codes.js';

export type SsoLoginCode = Selectable<SsoLoginCodesTable>;

export async function insertLoginCode(db: Db, code: Insertable<SsoLoginCodesTable>): Promise<void> {
  await db.insertInto('sso_login_codes').values(code).execute();
}

/**
 * Spends a live code in one conditional statement and returns it: of two exchanges of one code,
 * exactly one gets it. The code challenge is compared by the caller, after the code is spent, so a
 * wrong verifier also burns the code.
 */
export function spendLoginCode(db: Db, codeHash: string, now: number): Promise<SsoLoginCode | undefined> {
  return db
    .updateTable('sso_login_codes')
    .set({ used_at: now })
    .where('code_hash', '=', codeHash)
    .where('used_at', 'is', null)
    .where('expires_at', '>', now)
    .returningAll()
    .executeTakeFirst();
}

/** Records a consumed state; false when it was consumed before (the insert decides). */
export async function consumeState(db: Db, stateHash: string, expiresAt: number): Promise<boolean> {
  const result = await db
    .insertInto('sso_used_states')
    .values({ state_hash: stateHash, expires_at: expiresAt })
    .onConflict((conflict) => conflict.column('state_hash').doNothing())
    .executeTakeFirst();
  return (result.numInsertedOrUpdatedRows ?? 0n) > 0n;
}

/**
 * Records an accepted logout token's `jti` until `expiresAt`; false when that issuer's token was
 * accepted before (the insert decides, on every instance). The issuer's rows past their expiry go
 * in the same call, so the table holds only tokens that could still be accepted.
 */
export async function consumeLogoutToken(db: Db, issuer: string, jtiHash: string, expiresAt: number, now: number): Promise<boolean> {
  await db.deleteFrom('sso_logout_tokens').where('issuer', '=', issuer).where('expires_at', '<', now).execute();
  const result = await db
    .insertInto('sso_logout_tokens')
    .values({ issuer, jti_hash: jtiHash, expires_at: expiresAt })
    .onConflict((conflict) => conflict.columns(['issuer', 'jti_hash']).doNothing())
    .executeTakeFirst();
  return (result.numInsertedOrUpdatedRows ?? 0n) > 0n;
}

/**
 * What no rule needs any more: used states past their expiry (an expired state is refused before
 * its digest is looked at), expired login codes, logout tokens that could no longer be accepted,
 * and callback-failure windows that have closed.
 */
export async function pruneSsoRows(db: Db, now: number, failureWindow: number): Promise<number> {
  const states = await db.deleteFrom('sso_used_states').where('expires_at', '<=', now).executeTakeFirst();
  const codes = await db.deleteFrom('sso_login_codes').where('expires_at', '<=', now).executeTakeFirst();
  const logoutTokens = await db.deleteFrom('sso_logout_tokens').where('expires_at', '<', now).executeTakeFirst();
  const failures = await db.deleteFrom('sso_callback_failures').where('window_start', '<=', now - failureWindow).executeTakeFirst();
  return Number(states.numDeletedRows + codes.numDeletedRows + logoutTokens.numDeletedRows + failures.numDeletedRows);
}
