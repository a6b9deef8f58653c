/**
 * How an admin signed in, as access tokens state it: `acr` a NIST SP 800-63B assurance level and
 * `amr` RFC 8176 method values. A session keeps the level it was signed in with, so a refresh
 * never raises it (nor lowers it).
 */
export type Acr = 'aal1' | 'aal2';

export interface Assurance {
  readonly acr: Acr;
  readonly amr: readonly string[];
}

export const PASSWORD_ONLY: Assurance = { acr: 'aal1', amr: ['pwd'] };

/** A TOTP code: a one-time password on top of the password. */
export const PASSWORD_AND_OTP: Assurance = { acr: 'aal2', amr: ['pwd', 'otp', 'mfa'] };

/**
 * A recovery code is a NIST look-up secret, something the admin has: AAL2 like an OTP. RFC 8176
 * has no value of its own for it, so `mfa` alone says that a second factor was presented.
 */
export const PASSWORD_AND_RECOVERY_CODE: Assurance = { acr: 'aal2', amr: ['pwd', 'mfa'] };

/** The stored form (sessions.amr): values never contain spaces. */
export function amrText(amr: readonly string[]): string {
  return amr.join(' ');
}

/** The session row's columns back to an assurance; unknown levels count as the lowest. */
export function assuranceOf(row: { readonly acr: string; readonly amr: string }): Assurance {
  return { acr: row.acr === 'aal2' ? 'aal2' : 'aal1', amr: row.amr.split(' ').filter((value) => value !== '') };
}
