/** Nothing keeps a recovery code but the e-mail: not the logs, the audit trail, /metrics or the stored digest. */
import { createHash } from 'node:crypto';
import { afterEach, describe, expect, it } from 'vitest';
import { deliverRound } from '../../../src/delivery/delivery-round.js';
import { createMailer, type Mailer } from '../../../src/delivery/email-send.js';
import { buildManagementApp } from '../../../src/http/management-app.js';
import { signIn } from '../../helpers/app.js';
import { TEST_DIALECTS } from '../../helpers/database.js';
import { useKeyFiles } from '../../helpers/key-files.js';
import { SMTP_FROM, parseMessage, partOf, startSmtpServer, type TestSmtpServer } from '../../helpers/smtp-server.js';
import { NEW_PASSWORD, adminWithAddress, codeIn, forgot, login, passwordRecoveryRows, recoveryMessages, reset, useRecoveryApps, type RecoveryApp } from './recovery-world.js';

const PAGE = 'https://admin.school.example/reset';
const newKeyFile = useKeyFiles();

const servers: TestSmtpServer[] = [];
const mailers: Mailer[] = [];
afterEach(async () => {
  for (const mailer of mailers.splice(0)) mailer.close();
  await Promise.all(servers.splice(0).map((server) => server.close()));
});

async function smtpWorld(open: (env?: Record<string, string>) => Promise<RecoveryApp>, env: Record<string, string>) {
  const server = await startSmtpServer();
  servers.push(server);
  const t = await open({ SMTP_URL: server.url, SMTP_FROM, PASSWORD_RECOVERY_URL: PAGE, ...env });
  const alice = await adminWithAddress(t, 'alice', 'alice@lincoln-high.example');
  return { server, t, alice };
}

/** Delivers what is due to the test SMTP server; returns the link and the code of the last recovery e-mail. */
async function deliverAndRead(t: RecoveryApp, server: TestSmtpServer): Promise<{ link: string; code: string }> {
  const smtp = t.config.notifications.smtp;
  if (smtp === undefined) throw new Error('SMTP_URL is not set');
  const mailer = createMailer(smtp, 5000);
  mailers.push(mailer);
  await deliverRound(t.services, { mailer, policy: { allowPrivate: [] } }, t.services.outbox, 'recovery-secrets-test');
  const mail = server.received.filter((received) => parseMessage(received.raw).headers.get('subject') === 'School sign-in: reset your password').at(-1);
  const link = /Choose a new password here: (\S+)/.exec(partOf(parseMessage(mail?.raw ?? ''), 'text/plain'))?.[1] ?? '';
  const code = new URLSearchParams(new URL(link).hash.slice(1)).get('code') ?? '';
  expect(code).toMatch(/^[A-Za-z0-9_-]{43}$/);
  return { link, code };
}

describe.each(TEST_DIALECTS)('recovery codes kept nowhere on %s', (dialect) => {
  const open = useRecoveryApps(dialect);

  it('after a whole recovery the code and the link are in no log line (trace), no audit event and not on /metrics; the database keeps a digest', async () => {
    const { server, t, alice } = await smtpWorld(open, { LOG_LEVEL: 'trace' });
    expect(t.config.logLevel).toBe('trace');
    await signIn(t.app, alice);
    expect((await forgot(t, alice)).statusCode).toBe(202);
    const { link, code } = await deliverAndRead(t, server);

    // Stored: the SHA-256 digest of the code, and nothing else of it.
    const [stored, ...others] = await passwordRecoveryRows(t);
    expect(others).toEqual([]);
    expect(stored?.code_hash).toBe(createHash('sha256').update(code).digest('base64url'));
    expect(JSON.stringify(stored)).not.toContain(code);

    // A wrong guess, a weak password with the right code, the reset, the spent code again.
    expect((await reset(t, alice, `${code.slice(0, -1)}x`)).statusCode).toBe(401);
    expect((await reset(t, alice, code, 'too short')).statusCode).toBe(422);
    expect((await reset(t, alice, code)).statusCode).toBe(204);
    expect((await reset(t, alice, code, 'yet another passphrase 31')).statusCode).toBe(401);
    expect((await login(t, alice, NEW_PASSWORD)).statusCode).toBe(200);
    // Spent: the row stays, expired, so the hour's count of codes mailed still holds.
    expect(await passwordRecoveryRows(t)).toMatchObject([{ code_hash: stored?.code_hash, expires_at: 0 }]);

    const logs = t.logs.join('');
    // The capture works: every request left its line, the reset's among them.
    expect(logs).toContain('"route":"/admin/auth/password/reset"');
    expect(logs).toContain('"route":"/admin/auth/password/forgot"');
    for (const secret of [code, link, encodeURIComponent(code), NEW_PASSWORD]) expect(logs, secret).not.toContain(secret);

    const events = await t.services.db.selectFrom('events').selectAll().execute();
    expect(events.map((event) => event.type)).toEqual(
      expect.arrayContaining(['admin.password_recovery_requested', 'admin.password_recovery_failed', 'admin.password_changed']),
    );
    expect(JSON.stringify(events)).not.toContain(code);
    const attempts = await t.services.db.selectFrom('outbox_attempts').selectAll().execute();
    expect(attempts.length).toBeGreaterThan(0);
    expect(JSON.stringify(attempts)).not.toContain(code);

    const management = await buildManagementApp(t.services, t.app);
    try {
      const metrics = await management.inject({ method: 'GET', url: '/metrics' });
      expect(metrics.statusCode).toBe(200);
      expect(metrics.body).toContain('school_auth_outbox_messages');
      expect(metrics.body).not.toContain(code);
    } finally {
      await management.close();
    }
  });

  it('with KEY_ENCRYPTION_KEY_FILE the outbox keeps the code sealed (enc:v1:) until it is mailed in clear', async () => {
    const { server, t, alice } = await smtpWorld(open, { KEY_ENCRYPTION_KEY_FILE: newKeyFile() });
    expect(t.config.keyEncryption).toBeDefined();
    expect((await forgot(t, alice)).statusCode).toBe(202);
    const [message] = await recoveryMessages(t);
    const sealed = (JSON.parse(message?.payload ?? '{}') as { data: { code: string } }).data.code;
    expect(sealed.startsWith('enc:v1:')).toBe(true);

    const { code } = await deliverAndRead(t, server);
    expect(codeIn(t, message!)).toBe(code);
    const outbox = await t.services.db.selectFrom('outbox').selectAll().execute();
    expect(JSON.stringify(outbox)).not.toContain(code);
    expect((await reset(t, alice, code)).statusCode).toBe(204);
    expect((await login(t, alice, NEW_PASSWORD)).statusCode).toBe(200);
  });
});
