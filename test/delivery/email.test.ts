/** E-mail notifications delivered to a real SMTP server (smtp-server, STARTTLS) in this process. */
import { describe, expect, it } from 'vitest';
import { setAdminEmail } from '../../src/auth/accounts/admin-email.js';
import { NOTIFYING_EVENTS } from '../../src/auth/notifications.js';
import { replaceEmails } from '../../src/db/queries/admin-emails.js';
import { WHAT_HAPPENED, emailText } from '../../src/delivery/email-text.js';
import { PASSWORD, signIn } from '../helpers/app.js';
import { TEST_DIALECTS } from '../helpers/database.js';
import { SMTP_FROM, SMTP_USER, parseMessage, partOf } from '../helpers/smtp-server.js';
import { NEW_PASSWORD, adminWithEmail, attemptsOf, deliver, emailRows, onlyEmailRow, operatorChangesPassword, useEmailWorld } from './email-setup.js';

const BROWSER = 'Mozilla/5.0 (X11; Linux x86_64) <Test & Co>';
const CLIENT_IP = '203.0.113.7';
const IF_NOT_YOU = 'If this was not you, someone else may have your password or a second factor.';

describe('e-mail text', () => {
  it('says in plain words what happened for every event that e-mails an admin, and for no other', () => {
    const emailed = Object.entries(NOTIFYING_EVENTS).filter(([, audience]) => audience === 'admin and platform').map(([type]) => type);
    expect(Object.keys(WHAT_HAPPENED).sort()).toEqual(emailed.sort());
    const data = { school_id: 's', username: 'u', admin_id: 'a', session_id: null, ip: null, user_agent: null, detail: null };
    const subjects = emailed.map((type) => emailText({ type, timestamp: '2026-01-05T08:00:00.000Z', data }).subject);
    // Each subject is its own sentence, never the fallback that names the event type.
    expect(new Set(subjects).size).toBe(emailed.length);
    for (const subject of subjects) expect(subject).toMatch(/^School sign-in: [A-Z][^.]+$/);
  });
});

describe.each(TEST_DIALECTS)('e-mail notifications on %s', (dialect) => {
  const { app, smtpServer, channels } = useEmailWorld(dialect);

  it('a password change sends one e-mail, over STARTTLS, to every address of the admin: what, when, from where, and what to do', async () => {
    const server = await smtpServer();
    const t = await app(server.url);
    const alice = await adminWithEmail(t, 'alice');
    // Signed in before any address was set: that sign-in from a new address writes no e-mail.
    const session = await signIn(t.app, alice);
    await setAdminEmail(t.services, alice.ref, 'Alice.Smith@Lincoln-High.example');
    await replaceEmails(t.services.db, alice.id, 'sso', [{ address: 'alice@district.example', type: null }], 1);
    t.clock.advance(90);

    const changed = await t.app.inject({
      method: 'POST',
      url: '/admin/auth/password',
      remoteAddress: CLIENT_IP,
      headers: { 'content-type': 'application/json', 'user-agent': BROWSER, authorization: `Bearer ${session.access_token}` },
      payload: JSON.stringify({ current_password: PASSWORD, new_password: NEW_PASSWORD }),
    });
    expect(changed.statusCode, changed.body).toBe(204);
    const written = await onlyEmailRow(t);
    expect(written).toMatchObject({ type: 'admin.password_changed', target: alice.id, state: 'pending', attempts: 0 });

    expect(await deliver(t, channels(t))).toBe(1);
    expect(server.received).toHaveLength(1);
    const [mail] = server.received;
    // Both addresses, in one message; the envelope sender is SMTP_FROM's address; sent encrypted, authenticated.
    expect([...(mail?.to ?? [])].sort()).toEqual(['Alice.Smith@lincoln-high.example', 'alice@district.example']);
    expect(mail).toMatchObject({ from: 'no-reply@school.example', secure: true, user: SMTP_USER });
    const message = parseMessage(mail?.raw ?? '');
    // SMTP_FROM, as Nodemailer writes it (the display name quoted: it holds a '-').
    expect(SMTP_FROM).toBe('School sign-in <no-reply@school.example>');
    expect(message.headers.get('from')).toBe('"School sign-in" <no-reply@school.example>');
    expect(message.headers.get('to')?.split(/,\s*/).sort()).toEqual(['Alice.Smith@lincoln-high.example', 'alice@district.example']);
    expect(message.headers.get('subject')).toBe('School sign-in: The password of your account was changed');
    expect(message.headers.get('content-type')).toMatch(/^multipart\/alternative;/);

    const text = partOf(message, 'text/plain');
    expect(text).toContain('The password of your account was changed.');
    expect(text).toContain('When: 2026-01-05 08:01:30 UTC');
    expect(text).toContain('School: lincoln-high');
    expect(text).toContain('Username: alice');
    expect(text).toContain(`From address: ${CLIENT_IP}`);
    expect(text).toContain(`Browser or program: ${BROWSER}`);
    expect(text.replace(/\s+/g, ' ')).toContain(IF_NOT_YOU);
    expect(text).not.toMatch(/<\/?(p|table|tr|th|td|strong)\b/);
    const html = partOf(message, 'text/html');
    expect(html).toContain('<p>The password of your account was changed.</p>');
    expect(html).toContain('<th align="left">When</th><td>2026-01-05 08:01:30 UTC</td>');
    expect(html).toContain(`<td>${CLIENT_IP}</td>`);
    // The user agent is the client's text: escaped, never markup.
    expect(html).toContain('<td>Mozilla/5.0 (X11; Linux x86_64) &#60;Test &#38; Co&#62;</td>');
    expect(html).not.toContain('<Test');
    expect(html.replace(/\s+/g, ' ')).toContain(`<strong>${IF_NOT_YOU}`);

    const row = await onlyEmailRow(t);
    expect(row).toMatchObject({ id: written.id, state: 'delivered', attempts: 1, last_error: null, lease_owner: null, lease_until: null });
    expect(Number(row.finished_at)).toBe(t.clock.now());
    expect(await attemptsOf(t, row.id)).toEqual([expect.objectContaining({ attempt: 1, ok: 1, error: null, status: null, at: t.clock.now() })]);
    expect(t.services.outbox.entries()).toEqual([{ channel: 'email', outcome: 'delivered', value: 1 }]);
    // Delivered means done: the next round finds nothing and sends nothing more.
    expect(await deliver(t, channels(t))).toBe(0);
    expect(server.received).toHaveLength(1);
  });

  it('an operator password change says it came from the command line; the addresses are read when it is sent', async () => {
    const server = await smtpServer();
    const t = await app(server.url);
    const bob = await adminWithEmail(t, 'bob', 'bob@old.example');
    await operatorChangesPassword(t, bob.ref);
    // Changed between the event and the delivery: the message goes where the admin is told now.
    await setAdminEmail(t.services, bob.ref, 'bob@new.example');
    await deliver(t, channels(t));
    expect(server.received.map((mail) => mail.to)).toEqual([['bob@new.example']]);
    const text = partOf(parseMessage(server.received[0]?.raw ?? ''), 'text/plain');
    expect(text).toContain('From address: the school-auth command line (an operator)');
    expect(text).toMatch(/Browser or program: school-auth-cli \(os user .+\)/);
    expect((await onlyEmailRow(t)).state).toBe('delivered');
  });

  it('an smtps: URL speaks TLS from the first byte', async () => {
    const server = await smtpServer({ secure: true });
    const t = await app(server.url.replace(/^smtp:/, 'smtps:'));
    const frank = await adminWithEmail(t, 'frank', 'frank@lincoln-high.example');
    await operatorChangesPassword(t, frank.ref);
    await deliver(t, channels(t));
    expect(server.received).toEqual([expect.objectContaining({ to: ['frank@lincoln-high.example'], secure: true })]);
    expect((await onlyEmailRow(t)).state).toBe('delivered');
  });

  it('without SMTP_URL a message for an admin with an address is written and becomes dead; none is written for an admin without one', async () => {
    const t = await app(undefined);
    expect(t.config.notifications.smtp).toBeUndefined();
    const carol = await adminWithEmail(t, 'carol', 'carol@lincoln-high.example');
    const dave = await adminWithEmail(t, 'dave');
    await operatorChangesPassword(t, carol.ref);
    await operatorChangesPassword(t, dave.ref);
    // Both changes were recorded; only carol's wrote an e-mail message.
    const events = await t.services.db.selectFrom('events').select('admin_id').where('type', '=', 'admin.password_changed').execute();
    expect(events.map((event) => event.admin_id).sort()).toEqual([carol.id, dave.id].sort());
    const [written] = await emailRows(t);
    expect(await emailRows(t)).toHaveLength(1);
    expect(written).toMatchObject({ target: carol.id, state: 'pending' });

    expect(await deliver(t, channels(t))).toBe(1);
    const row = await onlyEmailRow(t);
    expect(row).toMatchObject({ state: 'dead', attempts: 1, last_error: 'not sent: SMTP_URL is not set' });
    expect(Number(row.finished_at)).toBe(t.clock.now());
    expect(await attemptsOf(t, row.id)).toEqual([expect.objectContaining({ ok: 0, error: 'not sent: SMTP_URL is not set' })]);
    expect(t.services.outbox.entries()).toEqual([{ channel: 'email', outcome: 'dead', value: 1 }]);
    // Dead is final: later rounds leave it.
    t.clock.advance(86_400);
    expect(await deliver(t, channels(t))).toBe(0);
  });

  it('a message whose admin no longer has an address when it is sent becomes dead without reaching the server', async () => {
    const server = await smtpServer();
    const t = await app(server.url);
    const erin = await adminWithEmail(t, 'erin', 'erin@lincoln-high.example');
    await operatorChangesPassword(t, erin.ref);
    await setAdminEmail(t.services, erin.ref, null);
    await deliver(t, channels(t));
    expect(await onlyEmailRow(t)).toMatchObject({ state: 'dead', last_error: 'not sent: the admin has no e-mail address now' });
    expect(server.received).toEqual([]);
  });
});
