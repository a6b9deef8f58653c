import type { Expression, ExpressionBuilder, SqlBool } from 'kysely';
import { inTransaction, type Db } from '../database.js';
import type { DatabaseSchema } from '../schema/index.js';

/**
 * Which sessions a revocation ends: one (only if it is that admin's, when `adminId` is given), one
 * admin's (all but `exceptSessionId`, when given), one school's (only those at `acr`, when given),
 * the one a refresh token belongs to, or those signed in through the IdP `ssoIssuer`: as
 * `subject` and/or in its session `idpSession` (back-channel logout, unlink), or a school's
 * signed in through an IdP it no longer has (`sso remove`, `sso set` with another issuer), or a
 * school's signed in with a password by admins who have a discoverable passkey (passkeys `required`).
 */
export type RevokeScope =
  | { sessionId: string; adminId?: string }
  | { adminId: string; exceptSessionId?: string }
  | { schoolKey: string; acr?: string }
  | { refreshTokenHash: string }
  | { ssoIssuer: string; subject?: string; idpSession?: string }
  | { ssoOfSchool: string; exceptIssuer?: string }
  | { passwordOfPasskeyHolders: string };

type SessionsEb = ExpressionBuilder<DatabaseSchema, 'sessions'>;

function inScope(eb: SessionsEb, scope: RevokeScope): Expression<SqlBool> {
  if ('sessionId' in scope) {
    return scope.adminId === undefined ? eb('id', '=', scope.sessionId) : eb.and([eb('id', '=', scope.sessionId), eb('admin_id', '=', scope.adminId)]);
  }
  if ('adminId' in scope) {
    const ofAdmin = eb('admin_id', '=', scope.adminId);
    return scope.exceptSessionId === undefined ? ofAdmin : eb.and([ofAdmin, eb('id', '<>', scope.exceptSessionId)]);
  }
  if ('schoolKey' in scope) {
    const ofSchool = eb('admin_id', 'in', eb.selectFrom('admins').select('id').where('school_key', '=', scope.schoolKey));
    return scope.acr === undefined ? ofSchool : eb.and([ofSchool, eb('acr', '=', scope.acr)]);
  }
  if ('refreshTokenHash' in scope) return eb('id', '=', eb.selectFrom('refresh_tokens').select('session_id').where('token_hash', '=', scope.refreshTokenHash));
  if ('ssoOfSchool' in scope) return federatedOfSchool(eb, scope);
  if ('passwordOfPasskeyHolders' in scope) return passwordOfPasskeyHolders(eb, scope.passwordOfPasskeyHolders);
  return federated(eb, scope);
}

/** A school's password sessions (amr `pwd` first) of admins with a discoverable passkey. */
function passwordOfPasskeyHolders(eb: SessionsEb, schoolKey: string): Expression<SqlBool> {
  const holders = eb
    .selectFrom('admins')
    .innerJoin('mfa_factors', 'mfa_factors.admin_id', 'admins.id')
    .select('admins.id')
    .where('admins.school_key', '=', schoolKey)
    .where('mfa_factors.type', '=', 'webauthn')
    .where('mfa_factors.discoverable', '=', 1)
    .where('mfa_factors.confirmed_at', 'is not', null);
  return eb.and([eb('admin_id', 'in', holders), eb.or([eb('amr', '=', 'pwd'), eb('amr', 'like', 'pwd %')])]);
}

/** A school's sessions signed in through an IdP: any, or any but `exceptIssuer`'s (the IdP it has now). */
function federatedOfSchool(eb: SessionsEb, scope: { ssoOfSchool: string; exceptIssuer?: string }): Expression<SqlBool> {
  const ofSchool = eb('admin_id', 'in', eb.selectFrom('admins').select('id').where('school_key', '=', scope.ssoOfSchool));
  const issuer = scope.exceptIssuer === undefined ? eb('sso_issuer', 'is not', null) : eb('sso_issuer', '<>', scope.exceptIssuer);
  return eb.and([ofSchool, issuer]);
}

/** Sessions of one IdP identity, of one IdP session, or (both named) of that identity in that session. */
function federated(eb: SessionsEb, scope: { ssoIssuer: string; subject?: string; idpSession?: string }): Expression<SqlBool> {
  const matches: Expression<SqlBool>[] = [];
  if (scope.subject !== undefined) matches.push(eb('sso_subject', '=', scope.subject));
  if (scope.idpSession !== undefined) matches.push(eb('sso_session', '=', scope.idpSession));
  const who = scope.subject !== undefined && scope.idpSession !== undefined ? eb.and(matches) : eb.or(matches);
  return eb.and([eb('sso_issuer', '=', scope.ssoIssuer), who]);
}

/**
 * Takes the feed's next position when `scope` holds a live session (nothing is written otherwise,
 * so a logout with an unknown token writes nothing). The sequence row stays locked until the
 * caller's transaction commits: positions become visible in the order they were given, so a feed
 * cursor never passes one that commits later.
 */
async function takePosition(db: Db, scope: RevokeScope): Promise<number | undefined> {
  const taken = await db
    .updateTable('revocation_sequence')
    .set((eb) => ({ last_position: eb('last_position', '+', 1) }))
    .where('id', '=', 1)
    .where((eb) => eb.exists(eb.selectFrom('sessions').select('sessions.id').where((inner) => inScope(inner, scope)).where('revoked_at', 'is', null)))
    .returning('last_position')
    .executeTakeFirst();
  return taken?.last_position;
}

/**
 * Ends every live session in `scope` in one statement, which also stamps them with the position
 * the revocation feed lists them at; returns the sessions it ended. Every way a session ends
 * (logout, revoke, password change, disable, suspend, reuse, MFA reset, revoke-others) comes here.
 */
export function revokeSessions(db: Db, scope: RevokeScope, reason: string, now: number): Promise<{ id: string; admin_id: string }[]> {
  return inTransaction(db, async (trx) => {
    const position = await takePosition(trx, scope);
    if (position === undefined) return [];
    return trx
      .updateTable('sessions')
      .set({ revoked_at: now, revoke_reason: reason, revocation_seq: position })
      .where((eb) => inScope(eb, scope))
      .where('revoked_at', 'is', null)
      .returning(['id', 'admin_id'])
      .execute();
  });
}
