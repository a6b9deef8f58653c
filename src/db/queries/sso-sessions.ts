import type { Db } from '../database.js';

/**
 * Ends, in one statement, the live sessions signed in through the IdP `issuer` as `subject`, or
 * (when only the IdP session is named) those of that IdP session; returns them.
 */
export function revokeFederatedSessions(db: Db, issuer: string, who: { subject?: string; idpSession?: string }, now: number) {
  return db
    .updateTable('sessions')
    .set({ revoked_at: now, revoke_reason: 'sso_logout' })
    .where('sso_issuer', '=', issuer)
    .where((eb) => {
      const matches = [];
      if (who.subject !== undefined) matches.push(eb('sso_subject', '=', who.subject));
      if (who.idpSession !== undefined) matches.push(eb('sso_session', '=', who.idpSession));
      return who.subject !== undefined && who.idpSession !== undefined ? eb.and(matches) : eb.or(matches);
    })
    .where('revoked_at', 'is', null)
    .returning(['id', 'admin_id'])
    .execute();
}
