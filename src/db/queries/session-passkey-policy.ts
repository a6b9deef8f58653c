import type { ExpressionBuilder } from 'kysely';
import type { DatabaseSchema } from '../schema/index.js';

/**
 * The school's passkey policy, decided in the session's insert like the second-factor policy: a
 * password session (`pwd`) never starts for an admin with a discoverable passkey in a school that
 * requires passkey sign-in; a passkey-alone session (`user`, no `pwd` nor `fed`) never starts in a
 * school that turned it off or signs in only through its IdP.
 */
export function passkeyPolicyRule(amrText: string) {
  const amr = amrText.split(' ');
  if (amr.includes('pwd')) {
    return (eb: ExpressionBuilder<DatabaseSchema, 'admins' | 'schools'>) => {
      const discoverable = eb
        .selectFrom('mfa_factors')
        .select('mfa_factors.id')
        .whereRef('mfa_factors.admin_id', '=', 'admins.id')
        .where('mfa_factors.type', '=', 'webauthn')
        .where('mfa_factors.discoverable', '=', 1)
        .where('mfa_factors.confirmed_at', 'is not', null);
      return eb.not(eb.and([eb('schools.passkey_policy', '=', 'required'), eb.exists(discoverable)]));
    };
  }
  if (amr.includes('fed') || !amr.includes('user')) return undefined;
  return (eb: ExpressionBuilder<DatabaseSchema, 'admins' | 'schools'>) => {
    const idpOnly = eb
      .selectFrom('sso_settings')
      .select('sso_settings.school_key')
      .whereRef('sso_settings.school_key', '=', 'admins.school_key')
      .where('sso_settings.password_login', '=', 0);
    return eb.and([eb('schools.passkey_policy', '<>', 'off'), eb.not(eb.exists(idpOnly))]);
  };
}
