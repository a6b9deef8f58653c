import type { NotificationPayload } from '../auth/notifications.js';
import { recoveryLink } from '../auth/accounts/recovery-code.js';
import { escapeHtml, utc, type EmailText } from './email-text.js';

/**
 * The e-mail that carries a recovery code: the link to the front end's page when
 * PASSWORD_RECOVERY_URL is set (the code in its fragment), else the code to type; when it stops
 * working; who asked, from where; that a second factor is still asked for; what to do if it was
 * not them.
 */
export function recoveryEmailText(payload: NotificationPayload, code: string, pageUrl: string | undefined): EmailText {
  const { data } = payload;
  const who = { schoolId: data.school_id ?? '', username: data.username ?? '' };
  const action = pageUrl === undefined ? `Your recovery code: ${code}` : `Choose a new password here: ${recoveryLink(pageUrl, who, code)}`;
  const lines = [
    `Someone asked to reset the password of the account ${who.username} at ${who.schoolId}.`,
    '',
    action,
    '',
    `It works once, until ${utc(data.detail ?? payload.timestamp)}. A new request replaces it.`,
    'If your account has a second factor, you will still be asked for it when you sign in.',
    '',
    `Asked at ${utc(payload.timestamp)} from ${data.ip ?? 'an unknown address'} (${data.user_agent ?? 'unknown browser'}).`,
    "If this was not you, ignore this e-mail: your password stays as it is. Tell your school's IT staff if it happens again.",
    '',
  ];
  const html = lines
    .filter((line) => line !== '')
    .map((line) => {
      if (line === action && pageUrl !== undefined) {
        const href = escapeHtml(recoveryLink(pageUrl, who, code));
        return `<p><a href="${href}">Choose a new password</a></p>`;
      }
      return `<p>${escapeHtml(line)}</p>`;
    })
    .join('');
  return { subject: 'School sign-in: reset your password', text: lines.join('\n'), html };
}
