/** The whole recovery by e-mail, the mail read from a real SMTP server (smtp-server, STARTTLS) in this process. */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { replaceEmails } from '../../../src/db/queries/admin-emails.js';
import { deliverRound } from '../../../src/delivery/delivery-round.js';
import { createMailer, type Mailer } from '../../../src/delivery/email-send.js';
import { addWebhook } from '../../../src/delivery/webhooks.js';
import { FORGOT_ANSWER } from '../../../src/http/routes/sessions/password-recovery.js';
import { PASSWORD, signIn } from '../../helpers/app.js';
import { refresh } from '../../helpers/contract.js';
import { TEST_DIALECTS } from '../../helpers/database.js';
import { SMTP_FROM, parseMessage, partOf, startSmtpServer, type TestSmtpServer } from '../../helpers/smtp-server.js';
import { NEW_PASSWORD, adminWithAddress, forgot, login, recoveryMessages, reset, useRecoveryApps, type RecoveryApp } from './recovery-world.js';

const PAGE = 'https://admin.school.example/reset';
const RECOVERY_SUBJECT = 'School sign-in: reset your password';
const CHANGED_SUBJECT = 'School sign-in: The password of your account was changed';
const CODE = /^[A-Za-z0-9_-]{43}$/;

const servers: TestSmtpServer[] = [];
const mailers: Mailer[] = [];
const receivers: Server[] = [];
afterEach(async () => {
  for (const mailer of mailers.splice(0)) mailer.close();
  await Promise.all(servers.splice(0).map((server) => server.close()));
  await Promise.all(receivers.splice(0).map((server) => new Promise((resolve) => server.close(resolve))));
});

/** A webhook receiver that answers 204 and keeps every body. */
async function webhookReceiver(): Promise<{ url: string; bodies: string[] }> {
  const bodies: string[] = [];
  const server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      bodies.push(Buffer.concat(chunks).toString('utf8'));
      response.writeHead(204).end();
    });
  });
  receivers.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`, bodies };
}

/** One delivery round of the outbox with a mailer built by createMailer on SMTP_URL, as the delivery loop builds it. */
function deliver(t: RecoveryApp): Promise<number> {
  const smtp = t.config.notifications.smtp;
  if (smtp === undefined) throw new Error('SMTP_URL is not set');
  const mailer = createMailer(smtp, 5000);
  mailers.push(mailer);
  return deliverRound(t.services, { mailer, policy: { allowPrivate: ['127.0.0.1'] } }, t.services.outbox, 'recovery-test');
}

function mailsWithSubject(server: TestSmtpServer, subject: string) {
  return server.received.filter((mail) => parseMessage(mail.raw).headers.get('subject') === subject);
}

describe.each(TEST_DIALECTS)('password recovery through a real SMTP server on %s', (dialect) => {
  const open = useRecoveryApps(dialect);

  async function world(env: Record<string, string> = {}) {
    const server = await startSmtpServer();
    servers.push(server);
    const t = await open({ SMTP_URL: server.url, SMTP_FROM, WEBHOOK_ALLOW_HTTP_LOOPBACK: 'true', ...env });
    const alice = await adminWithAddress(t, 'alice', 'Alice.Smith@Lincoln-High.example');
    await replaceEmails(t.services.db, alice.id, 'sso', [{ address: 'alice@district.example', type: null }], 1);
    return { server, t, alice, addresses: ['Alice.Smith@lincoln-high.example', 'alice@district.example'] };
  }

  it('mails every address a link with the code in its #fragment; the code sets a new password, ends every session and is told of', async () => {
    const { server, t, alice, addresses } = await world({ PASSWORD_RECOVERY_URL: PAGE });
    const sessions = [await signIn(t.app, alice), await signIn(t.app, alice)];
    const hook = await webhookReceiver();
    const webhook = await addWebhook(t.services, { url: hook.url });

    const asked = await forgot(t, alice, '203.0.113.9', { 'user-agent': 'RecoveryTest/1.0' });
    expect(asked.statusCode).toBe(202);
    expect(asked.json()).toEqual(FORGOT_ANSWER);
    // The code goes to the admin alone: one e-mail message, nothing for the webhook.
    expect((await recoveryMessages(t)).map((row) => row.channel)).toEqual(['email']);
    await deliver(t);

    const [mail, ...more] = mailsWithSubject(server, RECOVERY_SUBJECT);
    expect(more).toEqual([]);
    expect([...(mail?.to ?? [])].sort()).toEqual(addresses);
    expect(mail?.secure).toBe(true);
    const message = parseMessage(mail?.raw ?? '');
    const text = partOf(message, 'text/plain');
    const linkText = /Choose a new password here: (\S+)/.exec(text)?.[1];
    expect(linkText, text).toBeDefined();
    const link = new URL(linkText ?? '');
    expect(`${link.origin}${link.pathname}`).toBe(PAGE);
    // Nothing in the query string, which browsers send on (access logs, Referer): all of it in the fragment.
    expect(link.search).toBe('');
    const fragment = new URLSearchParams(link.hash.slice(1));
    expect([...fragment.keys()].sort()).toEqual(['code', 'school_id', 'username']);
    expect(fragment.get('school_id')).toBe('lincoln-high');
    expect(fragment.get('username')).toBe('alice');
    const code = fragment.get('code') ?? '';
    expect(code).toMatch(CODE);
    expect(text).toContain('from 203.0.113.9 (RecoveryTest/1.0)');
    // PASSWORD_RECOVERY_TTL (900 s) after the request, on the test clock.
    expect(text).toContain('It works once, until 2026-01-05 08:15:00 UTC.');
    // The HTML part links to the same page, the & of the fragment escaped.
    expect(partOf(message, 'text/html')).toContain(`<a href="${link.href.replace(/&/g, '&#38;')}">`);

    const done = await reset(t, { schoolId: fragment.get('school_id') ?? '', username: fragment.get('username') ?? '' }, code);
    expect(done.statusCode, done.body).toBe(204);
    expect(done.body).toBe('');
    expect((await login(t, alice, NEW_PASSWORD)).statusCode).toBe(200);
    expect((await login(t, alice, PASSWORD)).statusCode).toBe(401);
    for (const session of sessions) expect((await refresh(t.app, session.refresh_token)).statusCode).toBe(401);

    // The change is told like any other: an e-mail to the admin and the webhook, never the code.
    const changed = await t.services.db.selectFrom('outbox').select(['channel', 'target']).where('type', '=', 'admin.password_changed').execute();
    expect(changed.map((row) => `${row.channel} ${row.target}`).sort()).toEqual([`email ${alice.id}`, `webhook ${webhook.id}`]);
    await deliver(t);
    const [notice, ...others] = mailsWithSubject(server, CHANGED_SUBJECT);
    expect(others).toEqual([]);
    expect([...(notice?.to ?? [])].sort()).toEqual(addresses);
    const told = hook.bodies.map((body) => JSON.parse(body) as { type: string });
    expect(told.map((payload) => payload.type)).toContain('admin.password_changed');
    expect(told.map((payload) => payload.type)).not.toContain('password.recovery');
    expect(hook.bodies.join('')).not.toContain(code);
  });

  it('without PASSWORD_RECOVERY_URL mails the code itself, which works once', async () => {
    const { server, t, alice, addresses } = await world();
    expect(t.config.passwordRecovery.url).toBeUndefined();
    expect((await forgot(t, alice)).statusCode).toBe(202);
    await deliver(t);
    const [mail] = mailsWithSubject(server, RECOVERY_SUBJECT);
    expect([...(mail?.to ?? [])].sort()).toEqual(addresses);
    const text = partOf(parseMessage(mail?.raw ?? ''), 'text/plain');
    const code = /Your recovery code: (\S+)/.exec(text)?.[1] ?? '';
    expect(code).toMatch(CODE);
    expect(text).not.toContain('Choose a new password here');
    expect(text).not.toMatch(/https?:\/\//);

    expect((await reset(t, alice, code)).statusCode).toBe(204);
    expect((await login(t, alice, NEW_PASSWORD)).statusCode).toBe(200);
    // Spent: the same code again is the 401 of any wrong code.
    expect((await reset(t, alice, code, 'yet another passphrase 99')).statusCode).toBe(401);
    expect((await login(t, alice, NEW_PASSWORD)).statusCode).toBe(200);
  });
});
