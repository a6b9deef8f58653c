import type { NotificationPayload } from '../auth/notifications.js';

/** What happened, in plain English, for each event that notifies an admin (test/delivery keeps this complete). */
export const WHAT_HAPPENED: Readonly<Record<string, string>> = {
  'admin.password_changed': 'The password of your account was changed.',
  'mfa.enrolled': 'A second factor (an authenticator app or a passkey) was added to your account.',
  'mfa.removed': 'A second factor was removed from your account.',
  'mfa.recovery_codes_renewed': 'New recovery codes were made for your account; the old ones no longer work.',
  'mfa.recovery_code_used': 'A recovery code was used to sign in to your account.',
  'mfa.reset': 'An operator removed every second factor and recovery code of your account.',
  'mfa.locked': 'Second-factor checks of your account were locked after many wrong codes in a row.',
  'login.new_address': 'Your account signed in from an address it had not signed in from before.',
  'account.locked': 'Your account was locked after many failed sign-ins in a row.',
  'admin.disabled': 'Your account was disabled; it cannot sign in.',
  'admin.enabled': 'Your account was enabled again; it can sign in.',
  'sso.linked': "Your account was linked to an identity at your district's single sign-on.",
  'sso.unlinked': "Your account's single sign-on link was removed.",
  'refresh.reuse': 'A session of your account was ended because its refresh token was used twice, which happens when a token is stolen.',
};

const IF_NOT_YOU =
  'If this was not you, someone else may have your password or a second factor. Contact your ' +
  "school's IT administrator now and ask them to change your password and reset your second " +
  'factors; they can see every sign-in of your account in the audit trail.';

export interface EmailText {
  readonly subject: string;
  readonly text: string;
  readonly html: string;
}

/** An ISO time as people read it: `2026-12-04 09:15:02 UTC`. */
export function utc(iso: string): string {
  return iso.replace('T', ' ').replace(/\.\d+Z$/, ' UTC');
}

export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (char) => `&#${char.charCodeAt(0)};`);
}

/** The facts of the message, in order: when, which account, from where. */
function facts(payload: NotificationPayload): [string, string][] {
  const { data } = payload;
  const where = data.ip === null ? 'the school-auth command line (an operator)' : data.ip;
  return [
    ['When', utc(payload.timestamp)],
    ['School', data.school_id ?? '-'],
    ['Username', data.username ?? '-'],
    ['From address', where],
    ['Browser or program', data.user_agent ?? '-'],
  ];
}

/** The e-mail telling an admin of an event: plain text and the same in HTML. */
export function emailText(payload: NotificationPayload): EmailText {
  const happened = WHAT_HAPPENED[payload.type] ?? `Something changed on your account (${payload.type}).`;
  const lines = facts(payload);
  const text = [happened, '', ...lines.map(([name, value]) => `${name}: ${value}`), '', IF_NOT_YOU, ''].join('\n');
  const rows = lines.map(([name, value]) => `<tr><th align="left">${escapeHtml(name)}</th><td>${escapeHtml(value)}</td></tr>`).join('');
  const html = `<p>${escapeHtml(happened)}</p><table>${rows}</table><p><strong>${escapeHtml(IF_NOT_YOU)}</strong></p>`;
  return { subject: `School sign-in: ${happened.replace(/[.;].*$/, '')}`, text, html };
}
