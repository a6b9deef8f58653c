import { isIP } from 'node:net';
import ipaddr from 'ipaddr.js';

/** Where notifications go from (SMTP_*) and which webhook endpoints may be reached (WEBHOOK_*). */
export interface NotificationsConfig {
  /** E-mail to administrators; undefined when SMTP_URL is unset (e-mail messages are then not sent). */
  readonly smtp: { readonly url: string; readonly from: string } | undefined;
  /** Host names, addresses and CIDR ranges that webhooks may reach though they are not public. */
  readonly webhookAllowPrivate: readonly string[];
  /** Plain http to a loopback address, for tests and local development only. */
  readonly webhookAllowHttpLoopback: boolean;
}

interface NotificationSettings {
  readonly smtpUrl: string | undefined;
  readonly smtpFrom: string | undefined;
  readonly allowPrivate: string | undefined;
  readonly allowHttpLoopback: boolean;
}

const ADDRESS = /^[^\s@<>]+@[^\s@<>]+\.[^\s@<>]+$|^[^<>\p{Cc}]*<[^\s@<>]+@[^\s@<>]+\.[^\s@<>]+>$/u;
const HOST_NAME = /^(?=.{1,253}$)[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?(\.[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)*$/i;

function smtpProblem(url: string): string | undefined {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return 'SMTP_URL: expected a URL like smtp://user:password@mail.school.example:587 (STARTTLS) or smtps://... (TLS)';
  }
  if (parsed.protocol !== 'smtp:' && parsed.protocol !== 'smtps:') return `SMTP_URL: the scheme must be smtp: (STARTTLS) or smtps: (TLS), not ${parsed.protocol}`;
  if (parsed.hostname === '') return 'SMTP_URL: names no host';
  // smtp: always upgrades with STARTTLS: a parameter that would turn that off is refused.
  const tlsOff = ['ignoreTLS', 'requireTLS', 'secure'].find((name) => parsed.searchParams.has(name));
  if (tlsOff !== undefined) return `SMTP_URL: the ${tlsOff} parameter is not accepted: smtp: always uses STARTTLS, smtps: TLS`;
  return undefined;
}

function allowEntryProblem(entry: string): string | undefined {
  if (entry.includes('/')) return ipaddr.isValidCIDR(entry) ? undefined : `WEBHOOK_ALLOW_PRIVATE: ${JSON.stringify(entry)} is not a CIDR range like 10.0.0.0/8`;
  if (isIP(entry) !== 0 || HOST_NAME.test(entry)) return undefined;
  return `WEBHOOK_ALLOW_PRIVATE: ${JSON.stringify(entry)} is not a host name, an address or a CIDR range`;
}

/** Validates the notification settings; each problem names its variable. */
export function readNotificationsConfig(settings: NotificationSettings): { config: NotificationsConfig; problems: string[] } {
  const problems: string[] = [];
  const { smtpUrl, smtpFrom } = settings;
  if (smtpUrl !== undefined) {
    const problem = smtpProblem(smtpUrl);
    if (problem !== undefined) problems.push(problem);
    if (smtpFrom === undefined) problems.push('SMTP_FROM: required with SMTP_URL: the sender, e.g. "School sign-in <no-reply@school.example>"');
  }
  if (smtpFrom !== undefined && !ADDRESS.test(smtpFrom)) problems.push(`SMTP_FROM: ${JSON.stringify(smtpFrom)} is not an e-mail address`);
  if (smtpFrom !== undefined && smtpUrl === undefined) problems.push('SMTP_FROM: set SMTP_URL too, or no e-mail is sent');
  const allowPrivate = (settings.allowPrivate ?? '').split(',').map((entry) => entry.trim().toLowerCase()).filter((entry) => entry !== '');
  for (const entry of allowPrivate) {
    const problem = allowEntryProblem(entry);
    if (problem !== undefined) problems.push(problem);
  }
  const smtp = smtpUrl !== undefined && smtpFrom !== undefined ? { url: smtpUrl, from: smtpFrom } : undefined;
  return { config: { smtp, webhookAllowPrivate: allowPrivate, webhookAllowHttpLoopback: settings.allowHttpLoopback }, problems };
}
