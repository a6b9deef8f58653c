/** E-mail delivery against SMTP servers that are down, slow, refusing or without STARTTLS. */
import { performance } from 'node:perf_hooks';
import { describe, expect, it } from 'vitest';
import { replaceEmails } from '../../src/db/queries/admin-emails.js';
import { TEST_DIALECTS } from '../helpers/database.js';
import { freePort } from '../helpers/free-port.js';
import { smtpUrl } from '../helpers/smtp-server.js';
import { adminWithEmail, attemptsOf, deliver, onlyEmailRow, operatorChangesPassword, useEmailWorld } from './email-setup.js';

/** The first retry: 5 s after the failure, stretched by up to a quarter (src/delivery/retry.ts). */
const FIRST_RETRY_MS = [5_000, 6_250] as const;
/** The attempt timeout of the slow-server tests, and how much longer a round may take on a busy machine. */
const TIMEOUT_MS = 300;
const SLACK_MS = 3_000;

/** An SMTP refusal, as smtp-server sends it: the code and the text. */
const refusal = (code: number, text: string) => Object.assign(new Error(text), { responseCode: code });

describe.each(TEST_DIALECTS)('e-mail delivery failures on %s', (dialect) => {
  const { app, smtpServer, channels } = useEmailWorld(dialect);

  /** An app whose SMTP_URL is `url` and an admin with one address whose password just changed. */
  async function pendingMessage(url: string) {
    const t = await app(url);
    const admin = await adminWithEmail(t, 'alice', 'alice@lincoln-high.example');
    await operatorChangesPassword(t, admin.ref);
    return t;
  }

  it('with the server down the message waits for a retry, and is delivered once the server is back', async () => {
    const port = await freePort();
    const t = await pendingMessage(smtpUrl(port));
    const send = channels(t);
    expect(await deliver(t, send)).toBe(1);
    const failed = await onlyEmailRow(t);
    expect(failed).toMatchObject({ state: 'pending', attempts: 1, finished_at: null, lease_owner: null });
    expect(failed.last_error).toMatch(/ECONNREFUSED/);
    const retryIn = Number(failed.next_attempt_at) - t.clock.now();
    expect(retryIn).toBeGreaterThanOrEqual(FIRST_RETRY_MS[0]);
    expect(retryIn).toBeLessThanOrEqual(FIRST_RETRY_MS[1]);
    expect(t.services.outbox.entries()).toEqual([{ channel: 'email', outcome: 'failed', value: 1 }]);

    // Not yet due: the server is back, but a round before next_attempt_at does not try.
    const server = await smtpServer({}, port);
    t.clock.advance(FIRST_RETRY_MS[0] / 1000 - 1);
    expect(await deliver(t, send)).toBe(0);
    expect(server.received).toEqual([]);

    t.clock.advance((FIRST_RETRY_MS[1] - FIRST_RETRY_MS[0]) / 1000 + 2);
    expect(await deliver(t, send)).toBe(1);
    expect(server.received.map((mail) => mail.to)).toEqual([['alice@lincoln-high.example']]);
    expect(await onlyEmailRow(t)).toMatchObject({ id: failed.id, state: 'delivered', attempts: 2, last_error: null });
    const attempts = await attemptsOf(t, failed.id);
    expect(attempts.map(({ attempt, ok }) => ({ attempt, ok }))).toEqual([
      { attempt: 1, ok: 0 },
      { attempt: 2, ok: 1 },
    ]);
    expect(attempts[0]?.error).toMatch(/ECONNREFUSED/);
  });

  it.each([
    ['never greets (its connection check never answers)', 'greeting'],
    ['stops answering once it has the message', 'data'],
  ] as const)('a server that %s fails the attempt within the timeout, and the message is retried', async (_, stall) => {
    const server = await smtpServer(
      stall === 'greeting'
        ? { onConnect: () => undefined }
        : { onData: (stream) => void stream.resume() },
    );
    const t = await pendingMessage(server.url);
    const started = performance.now();
    expect(await deliver(t, channels(t, TIMEOUT_MS))).toBe(1);
    const took = performance.now() - started;
    // Bounded by the timeout it was given (the default is 10 s), and not a quick refusal either.
    expect(took).toBeGreaterThanOrEqual(TIMEOUT_MS - 50);
    expect(took).toBeLessThan(TIMEOUT_MS + SLACK_MS);
    const row = await onlyEmailRow(t);
    expect(row).toMatchObject({ state: 'pending', attempts: 1 });
    // A silent greeting trips the greeting or the socket timeout (both TIMEOUT_MS), whichever fires first.
    expect(row.last_error).toMatch(stall === 'greeting' ? /^(Greeting never received|Timeout)/ : /^Timeout/);
    expect(Number(row.next_attempt_at)).toBeGreaterThan(t.clock.now());
    expect(server.received).toEqual([]);
  });

  it('a recipient refused with 550 makes the message dead at once; a 450 is retried', async () => {
    const refused = await smtpServer({ onRcptTo: (_, __, callback) => callback(refusal(550, '5.1.1 No such user here')) });
    const t = await pendingMessage(refused.url);
    await deliver(t, channels(t));
    const dead = await onlyEmailRow(t);
    expect(dead).toMatchObject({ state: 'dead', attempts: 1 });
    expect(Number(dead.finished_at)).toBe(t.clock.now());
    expect(dead.last_error).toMatch(/550 5\.1\.1 No such user here/);
    expect(await attemptsOf(t, dead.id)).toEqual([expect.objectContaining({ ok: 0, error: dead.last_error })]);
    expect(t.services.outbox.entries()).toEqual([{ channel: 'email', outcome: 'dead', value: 1 }]);
    expect(refused.received).toEqual([]);

    const busy = await smtpServer({ onRcptTo: (_, __, callback) => callback(refusal(450, '4.2.1 Mailbox busy, try later')) });
    const later = await pendingMessage(busy.url);
    await deliver(later, channels(later));
    const waiting = await onlyEmailRow(later);
    expect(waiting).toMatchObject({ state: 'pending', attempts: 1 });
    expect(waiting.last_error).toMatch(/450 4\.2\.1 Mailbox busy/);
  });

  it('one of two addresses refused: delivered to the other, and the refused one is named', async () => {
    const server = await smtpServer({
      onRcptTo: (address, _, callback) => callback(address.address.startsWith('gone@') ? refusal(550, '5.1.1 No such user here') : null),
    });
    const t = await app(server.url);
    const admin = await adminWithEmail(t, 'alice', 'alice@lincoln-high.example');
    await replaceEmails(t.services.db, admin.id, 'sso', [{ address: 'gone@district.example', type: null }], 1);
    await operatorChangesPassword(t, admin.ref);
    await deliver(t, channels(t));
    expect(server.received.map((mail) => mail.to)).toEqual([['alice@lincoln-high.example']]);
    const row = await onlyEmailRow(t);
    expect(row).toMatchObject({ state: 'delivered', attempts: 1 });
    expect(row.last_error).toContain('refused gone@district.example');
  });

  it('smtp: to a server that refuses STARTTLS sends nothing, not even the password, and the attempt fails', async () => {
    // A plaintext client would succeed here: AUTH and mail are accepted without TLS.
    const server = await smtpServer({ disabledCommands: ['STARTTLS'], allowInsecureAuth: true });
    const t = await pendingMessage(server.url);
    await deliver(t, channels(t));
    expect(server.received).toEqual([]);
    expect(server.logins).toEqual([]);
    const row = await onlyEmailRow(t);
    expect(row).toMatchObject({ state: 'pending', attempts: 1 });
    expect(row.last_error).toMatch(/STARTTLS/);
    expect(await attemptsOf(t, row.id)).toEqual([expect.objectContaining({ ok: 0 })]);
  });

  it('a wrong SMTP password (535) is retried, not a dead letter: the relay is fixed by an operator, not by the message', async () => {
    const server = await smtpServer();
    const t = await pendingMessage(server.url.replace(':smtp-S3cret@', ':wrong-password@'));
    await deliver(t, channels(t));
    expect(server.logins).toEqual([{ user: 'mailer', secure: true }]);
    expect(server.received).toEqual([]);
    const row = await onlyEmailRow(t);
    expect(row).toMatchObject({ state: 'pending', attempts: 1 });
    expect(row.last_error).toMatch(/535/);
  });

  it('smtp: to a server that does not announce STARTTLS (but supports it) still upgrades before sending', async () => {
    const server = await smtpServer({ hideSTARTTLS: true, allowInsecureAuth: true });
    const t = await pendingMessage(server.url);
    await deliver(t, channels(t));
    expect(server.received).toHaveLength(1);
    expect(server.received[0]?.secure).toBe(true);
    expect(server.logins).toEqual([{ user: 'mailer', secure: true }]);
    expect((await onlyEmailRow(t)).state).toBe('delivered');
  });
});
