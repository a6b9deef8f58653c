import { afterEach } from 'vitest';
import { changePassword, requireAdmin } from '../../src/auth/accounts/admins.js';
import { setAdminEmail } from '../../src/auth/accounts/admin-email.js';
import type { Dialect } from '../../src/db/database.js';
import { deliverRound } from '../../src/delivery/delivery-round.js';
import { createMailer, type Mailer } from '../../src/delivery/email-send.js';
import type { Channels } from '../../src/delivery/send-message.js';
import { seedAdmin, useTestApps, type TestApp } from '../helpers/app.js';
import { SMTP_FROM, startSmtpServer, type TestSmtpServer } from '../helpers/smtp-server.js';

export const NEW_PASSWORD = 'a brand new passphrase 42';
/** The lease owner of the rounds these tests run. */
const OWNER = 'email-test';

/**
 * The e-mail tests' world on one dialect: apps (useTestApps), SMTP servers and mailers, all
 * closed after each test.
 */
export function useEmailWorld(dialect: Dialect) {
  const open = useTestApps(dialect);
  const servers: TestSmtpServer[] = [];
  const mailers: Mailer[] = [];
  afterEach(async () => {
    for (const mailer of mailers.splice(0)) mailer.close();
    await Promise.all(servers.splice(0).map((server) => server.close()));
  });

  /** A test SMTP server (see startSmtpServer), closed after the test. */
  const smtpServer = async (...args: Parameters<typeof startSmtpServer>) => {
    const server = await startSmtpServer(...args);
    servers.push(server);
    return server;
  };

  /** The app with SMTP_URL = `url` (none when undefined) and SMTP_FROM. */
  const app = (url: string | undefined) => open(url === undefined ? {} : { SMTP_URL: url, SMTP_FROM });

  /** The channels a delivery loop of `t` would build, with attempts bounded by `timeoutMs`. */
  const channels = (t: TestApp, timeoutMs?: number): Channels => {
    const smtp = t.config.notifications.smtp;
    const mailer = smtp === undefined ? undefined : createMailer(smtp, timeoutMs);
    if (mailer !== undefined) mailers.push(mailer);
    return { mailer, policy: { allowPrivate: [] } };
  };

  return { app, smtpServer, channels };
}

/** An admin of lincoln-high (created with seedAdmin), told at `address` when one is given. */
export async function adminWithEmail(t: TestApp, username: string, address?: string) {
  const seeded = await seedAdmin(t.services, { username });
  const ref = { schoolId: seeded.schoolId, username };
  if (address !== undefined) await setAdminEmail(t.services, ref, address);
  const { id } = await requireAdmin(t.services, ref);
  return { ...seeded, ref, id };
}

/** An operator sets a new password (`admin passwd`): the admin.password_changed event. */
export async function operatorChangesPassword(t: TestApp, ref: { schoolId: string; username: string }): Promise<void> {
  await changePassword(t.services, ref, NEW_PASSWORD);
}

/** One delivery round of `t`'s outbox; returns how many messages were due. */
export function deliver(t: TestApp, channels: Channels): Promise<number> {
  return deliverRound(t.services, channels, t.services.outbox, OWNER);
}

/** The e-mail messages of the outbox, oldest first. */
export function emailRows(t: TestApp) {
  return t.services.db.selectFrom('outbox').selectAll().where('channel', '=', 'email').orderBy('created_at').orderBy('id').execute();
}

/** The only e-mail message of the outbox; fails when there is not exactly one. */
export async function onlyEmailRow(t: TestApp) {
  const rows = await emailRows(t);
  if (rows.length !== 1) throw new Error(`expected one e-mail message in the outbox, found ${rows.length}: ${JSON.stringify(rows)}`);
  return rows[0] as (typeof rows)[number];
}

/** The attempts of one message, in order. */
export function attemptsOf(t: TestApp, messageId: string) {
  return t.services.db.selectFrom('outbox_attempts').selectAll().where('message_id', '=', messageId).orderBy('attempt').execute();
}
