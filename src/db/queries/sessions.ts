import { sql, type SelectQueryBuilder, type Selectable } from 'kysely';
import { dialectOf, inTransaction, type Db } from '../database.js';
import type { AdminsTable } from '../schema/admins.js';
import type { DatabaseSchema } from '../schema/index.js';
import type { SchoolsTable } from '../schema/schools.js';
import type { SessionsTable } from '../schema/sessions.js';
import { precompiled } from '../precompiled.js';
import { storableText } from '../text.js';
import { LIVENESS_SQL, type SessionLiveness } from './session-liveness.js';
import { passkeyPolicyRule } from './session-passkey-policy.js';

export type Session = Selectable<SessionsTable>;

/**
 * Creates a session and its first refresh token, inside or outside the caller's transaction, only
 * if the admin may still sign in with the credentials that were checked: same credential epoch,
 * not disabled, school not suspended, and for a password-only session a school whose policy is
 * not `required`. Decided by the insert itself; on PostgreSQL it also waits
 * for an operator's transaction that holds the admin's row, then sees what it committed.
 * Returns false, having written nothing, when an operator ended the admin's sessions meanwhile.
 */
type NewSession = Omit<Session, 'revoked_at' | 'revoke_reason' | 'revocation_seq' | 'sso_issuer' | 'sso_subject' | 'sso_session'> &
  Partial<Pick<Session, 'sso_issuer' | 'sso_subject' | 'sso_session'>>;

/**
 * A federated session starts only while its identity is linked to the admin and the school's IdP
 * is still its issuer: the rows are joined (and on PostgreSQL share-locked), so an unlink, `sso
 * remove` or `sso set` either commits first and this inserts nothing, or waits for this to commit
 * and then ends the session it started.
 */
function whileIdentityLinked<Q extends SelectQueryBuilder<DatabaseSchema, 'admins' | 'schools', object>>(query: Q, issuer: string, subject: string): Q {
  return query
    .innerJoin('sso_links', (join) => join.onRef('sso_links.admin_id', '=', 'admins.id').on('sso_links.issuer', '=', issuer).on('sso_links.subject', '=', subject))
    .innerJoin('sso_settings', (join) => join.onRef('sso_settings.school_key', '=', 'admins.school_key').on('sso_settings.issuer', '=', issuer)) as unknown as Q;
}

export function insertSession(db: Db, session: NewSession, tokenHash: string): Promise<boolean> {
  return inTransaction(db, async (trx) => {
    const inserted = await trx
      .insertInto('sessions')
      .columns(['id', 'admin_id', 'created_at', 'last_used_at', 'expires_at', 'ip', 'user_agent', 'credential_epoch', 'acr', 'amr', 'auth_time', 'sso_issuer', 'sso_subject', 'sso_session'])
      .expression((eb) => {
        let owner = eb
          .selectFrom('admins')
          .innerJoin('schools', 'schools.key', 'admins.school_key')
          .$if(typeof session.sso_issuer === 'string', (query) => whileIdentityLinked(query, session.sso_issuer ?? '', session.sso_subject ?? ''))
          .select([
            eb.cast<string>(eb.val(session.id), 'text').as('id'),
            'admins.id as admin_id',
            eb.cast<number>(eb.val(session.created_at), 'bigint').as('created_at'),
            eb.cast<number>(eb.val(session.last_used_at), 'bigint').as('last_used_at'),
            eb.cast<number>(eb.val(session.expires_at), 'bigint').as('expires_at'),
            eb.cast<string>(eb.val(session.ip), 'text').as('ip'),
            eb.cast<string>(eb.val(storableText(session.user_agent)), 'text').as('user_agent'),
            'admins.credential_epoch',
            eb.cast<string>(eb.val(session.acr), 'text').as('acr'),
            eb.cast<string>(eb.val(session.amr), 'text').as('amr'),
            eb.cast<number | null>(eb.val(session.auth_time), 'bigint').as('auth_time'),
            eb.cast<string | null>(eb.val(session.sso_issuer ?? null), 'text').as('sso_issuer'),
            eb.cast<string | null>(eb.val(session.sso_subject ?? null), 'text').as('sso_subject'),
            eb.cast<string | null>(eb.val(session.sso_session ?? null), 'text').as('sso_session'),
          ])
          .where('admins.id', '=', session.admin_id)
          .where('admins.credential_epoch', '=', session.credential_epoch)
          .where('admins.disabled_at', 'is', null)
          .where('schools.suspended_at', 'is', null);
        // A password-only session never starts in a school whose policy asks for a second factor:
        // decided here, so a login that read the policy before `school mfa required` ended the
        // school's aal1 sessions cannot leave one behind.
        if (session.acr !== 'aal2') owner = owner.where('schools.mfa_policy', '<>', 'required');
        const passkeyRule = passkeyPolicyRule(session.amr);
        if (passkeyRule !== undefined) owner = owner.where(passkeyRule);
        return dialectOf(db) === 'postgres' ? owner.forShare() : owner;
      })
      .executeTakeFirst();
    if ((inserted.numInsertedOrUpdatedRows ?? 0n) === 0n) return false;
    await insertFirstToken(trx, session, tokenHash);
    return true;
  });
}

async function insertFirstToken(db: Db, session: Pick<Session, 'id' | 'created_at'>, tokenHash: string): Promise<void> {
  await db
    .insertInto('refresh_tokens')
    .values({ token_hash: tokenHash, session_id: session.id, created_at: session.created_at, consumed_at: null, successor_sealed: null })
    .execute();
}

/**
 * Sessions with their admin and school: the one join that says who owns a session and whether
 * it may still be used (see session-liveness.ts). Every refresh and every
 * /admin/auth/me reads it, so the queries over it are written with `sql`, built in one step: the
 * query builder would copy its node tree at each call and compile it again, which costs more than
 * running the query. They still run through Kysely's executor.
 */
export const SESSIONS_WITH_OWNER = sql`sessions inner join admins on admins.id = sessions.admin_id inner join schools on schools.key = admins.school_key`;

/** What /admin/auth/me needs to decide whether a token's session is still alive. */
export async function findSessionStatus(db: Db, sessionId: string): Promise<SessionLiveness | undefined> {
  const { rows } = await sql<SessionLiveness>`select ${LIVENESS_SQL} from ${SESSIONS_WITH_OWNER} where sessions.id = ${sessionId}`.execute(db);
  return rows[0];
}

const setLastUsed = precompiled(({ now, sessionId }: { now: number; sessionId: string }) => sql`update sessions set last_used_at = ${now} where id = ${sessionId}`);

/** Moves a session's idle clock (on the refresh path, hence precompiled). */
export async function touchSession(db: Db, sessionId: string, now: number): Promise<void> {
  await setLastUsed(db, { now, sessionId });
}

/** Who owns a session, as the queries over SESSIONS_WITH_OWNER read it. */
export type SessionOwner = Pick<Selectable<AdminsTable>, 'username' | 'school_key'> & Pick<Selectable<SchoolsTable>, 'school_id'>;

/** A school's sessions (or one admin's), newest first, with what decides whether each is alive. */
export async function listSessions(db: Db, filter: { schoolKey: string; usernameKey?: string }) {
  const ofAdmin = filter.usernameKey === undefined ? sql`` : sql`and admins.username_key = ${filter.usernameKey}`;
  const { rows } = await sql<Session & SessionOwner & SessionLiveness>`select sessions.*, admins.username, admins.school_key, schools.school_id, ${LIVENESS_SQL}
    from ${SESSIONS_WITH_OWNER} where admins.school_key = ${filter.schoolKey} ${ofAdmin}
    order by sessions.created_at desc, sessions.id`.execute(db);
  return rows;
}

export async function findSession(db: Db, sessionId: string) {
  const { rows } = await sql<Pick<Session, 'id' | 'admin_id' | 'revoked_at'> & SessionOwner>`select sessions.id, sessions.admin_id, sessions.revoked_at,
    admins.username, admins.school_key, schools.school_id from ${SESSIONS_WITH_OWNER} where sessions.id = ${sessionId}`.execute(db);
  return rows[0];
}

/** When a session last presented a second factor; null for a password-only one. Not on the refresh path. */
export async function findSessionAuthTime(db: Db, sessionId: string): Promise<number | null> {
  const row = await db.selectFrom('sessions').select('auth_time').where('id', '=', sessionId).executeTakeFirst();
  return row?.auth_time ?? null;
}
