import { WebhookVerificationError } from 'standardwebhooks';
import { afterEach, describe, expect, it } from 'vitest';
import { requireAdmin, changePassword } from '../../src/auth/accounts/admins.js';
import { setAdminEmail } from '../../src/auth/accounts/admin-email.js';
import { CLI_CONTEXT } from '../../src/auth/events.js';
import { revokeSigningKey } from '../../src/auth/keys/key-revocation.js';
import { addWebhook, rotateWebhookSecret } from '../../src/delivery/webhooks.js';
import { seedAdmin, useTestApps, type TestApp } from '../helpers/app.js';
import { TEST_DIALECTS } from '../helpers/database.js';
import { useKeyFiles } from '../helpers/key-files.js';
import { channelsOf, deliver, LOOPBACK_ENV, outboxRows, startReceiver, verifyAt, type Receiver } from './webhook-receiver.js';

const NEW_PASSWORD = 'a whole new passphrase for alice';
const newKeyFile = useKeyFiles();

describe.each(TEST_DIALECTS)('webhook deliveries are signed as Standard Webhooks (%s)', (dialect) => {
  const open = useTestApps(dialect);
  const receivers: Receiver[] = [];
  afterEach(async () => {
    await Promise.all(receivers.splice(0).map((receiver) => receiver.close()));
  });

  async function setUp(answer?: Parameters<typeof startReceiver>[0], env: Record<string, string> = {}) {
    const receiver = await startReceiver(answer);
    receivers.push(receiver);
    const t = await open({ ...LOOPBACK_ENV, ...env });
    const admin = await seedAdmin(t.services);
    const ref = { schoolId: admin.schoolId, username: admin.username };
    const { id, secret } = await addWebhook(t.services, { url: receiver.url });
    return { t, receiver, ref, webhookId: id, secret };
  }

  const round = (t: TestApp) => deliver(t.services, channelsOf(t.config));

  it('admin.password_changed: verified by the standardwebhooks library, payload {type, timestamp, data}, webhook-id the message id', async () => {
    const { t, receiver, ref, secret } = await setUp();
    const adminId = (await requireAdmin(t.services, ref)).id;
    t.clock.advance(60);
    const changedAt = t.clock.now();
    await changePassword(t.services, ref, NEW_PASSWORD);
    const [message] = (await outboxRows(t.services.db)).filter((row) => row.type === 'admin.password_changed');
    t.clock.advance(3);
    expect(await round(t)).toBe(1);

    expect(receiver.received).toHaveLength(1);
    const [delivery] = receiver.received;
    expect(delivery?.path).toBe('/hook');
    expect(delivery?.headers).toMatchObject({
      'content-type': 'application/json',
      'webhook-id': message?.id,
      'webhook-timestamp': String(Math.floor(t.clock.now() / 1000)),
    });
    expect(delivery?.headers['user-agent']).toMatch(/^school-auth\//);
    expect(delivery?.headers['webhook-signature']).toMatch(/^v1,[A-Za-z0-9+/]{43}=$/);
    expect(verifyAt(t.clock.now(), secret, delivery!)).toEqual({
      type: 'admin.password_changed',
      timestamp: new Date(changedAt).toISOString(),
      data: {
        school_id: 'lincoln-high',
        username: 'alice',
        admin_id: adminId,
        session_id: null,
        ip: null,
        user_agent: CLI_CONTEXT.userAgent,
        detail: '0 sessions ended',
      },
    });
    // What a receiver must refuse: an altered body, another secret, a replay long after.
    expect(() => verifyAt(t.clock.now(), secret, { ...delivery!, body: delivery!.body.replace('alice', 'mallory') })).toThrow(WebhookVerificationError);
    const other = (await addWebhook(t.services, { url: receiver.url })).secret;
    expect(() => verifyAt(t.clock.now(), other, delivery!)).toThrow(WebhookVerificationError);
    expect(() => verifyAt(t.clock.now() + 3600_000, secret, delivery!)).toThrow(WebhookVerificationError);

    const [settled] = (await outboxRows(t.services.db)).filter((row) => row.id === message?.id);
    expect(settled).toMatchObject({ state: 'delivered', attempts: 1, last_error: null });
  });

  it('keys.revoked goes to the platform only: no e-mail row though the admin has an address; the webhook gets it signed', async () => {
    const { t, receiver, ref, secret } = await setUp();
    await setAdminEmail(t.services, ref, 'alice@lincoln.example');
    const [key] = await t.services.db.selectFrom('signing_keys').select('kid').execute();
    await revokeSigningKey(t.services, key!.kid);
    const rows = await outboxRows(t.services.db);
    expect(rows.map((row) => `${row.type} ${row.channel}`)).toEqual(['keys.revoked webhook']);
    expect(await round(t)).toBe(1);
    expect(receiver.received).toHaveLength(1);
    const payload = verifyAt(t.clock.now(), secret, receiver.received[0]!) as { type: string; data: Record<string, unknown> };
    expect(payload.type).toBe('keys.revoked');
    expect(payload.data).toMatchObject({ school_id: null, admin_id: null, username: null });
    expect(payload.data.detail).toMatch(new RegExp(`^key ${key!.kid} revoked; new key \\S+ signs now$`));
  });

  it('a retry carries the same webhook-id: a receiver answering 500 then 200 sees one id twice, each attempt signed anew', async () => {
    const { t, receiver, ref, secret } = await setUp((_request, n) => (n === 0 ? 500 : 200));
    await changePassword(t.services, ref, NEW_PASSWORD);
    expect(await round(t)).toBe(1);
    const [first] = await outboxRows(t.services.db);
    expect(first).toMatchObject({ state: 'pending', attempts: 1, last_error: 'HTTP 500: receiver says 500' });
    expect(await round(t)).toBe(0); // not due yet: the retry waits at least 5 s
    t.clock.advance(7);
    expect(await round(t)).toBe(1);

    const [one, two] = receiver.received;
    expect(receiver.received).toHaveLength(2);
    expect(one?.headers['webhook-id']).toBe(first?.id);
    expect(two?.headers['webhook-id']).toBe(first?.id);
    expect(two?.body).toBe(one?.body);
    expect(Number(two?.headers['webhook-timestamp']) - Number(one?.headers['webhook-timestamp'])).toBe(7);
    expect(verifyAt(t.clock.now() - 7000, secret, one!)).toEqual(verifyAt(t.clock.now(), secret, two!));
    expect((await outboxRows(t.services.db))[0]).toMatchObject({ state: 'delivered', attempts: 2 });
  });

  it('after rotate-secret both secrets verify (two v1 signatures); once 24 h have passed only the new one does', async () => {
    const { t, receiver, ref, webhookId, secret: oldSecret } = await setUp();
    const newSecret = await rotateWebhookSecret(t.services, webhookId);
    expect(newSecret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    expect(newSecret).not.toBe(oldSecret);

    await changePassword(t.services, ref, NEW_PASSWORD);
    await round(t);
    const during = receiver.received[0]!;
    expect(during.headers['webhook-signature']!.split(' ').map((part) => part.slice(0, 3))).toEqual(['v1,', 'v1,']);
    expect(verifyAt(t.clock.now(), oldSecret, during)).toMatchObject({ type: 'admin.password_changed' });
    expect(verifyAt(t.clock.now(), newSecret, during)).toMatchObject({ type: 'admin.password_changed' });

    t.clock.advance(24 * 3600 - 1);
    await changePassword(t.services, ref, `${NEW_PASSWORD} again`);
    await round(t);
    const lastSecond = receiver.received[1]!;
    expect(lastSecond.headers['webhook-signature']!.split(' ')).toHaveLength(2);
    expect(verifyAt(t.clock.now(), oldSecret, lastSecond)).toMatchObject({ type: 'admin.password_changed' });

    t.clock.advance(1);
    await changePassword(t.services, ref, `${NEW_PASSWORD} once more`);
    await round(t);
    const after = receiver.received[2]!;
    expect(receiver.received).toHaveLength(3);
    expect(after.headers['webhook-signature']!.split(' ')).toHaveLength(1);
    expect(verifyAt(t.clock.now(), newSecret, after)).toMatchObject({ type: 'admin.password_changed' });
    expect(() => verifyAt(t.clock.now(), oldSecret, after)).toThrow(WebhookVerificationError);
  });

  it('with KEY_ENCRYPTION_KEY_FILE the secrets are stored sealed, the previous one too, and deliveries still verify', async () => {
    const { t, receiver, ref, webhookId, secret } = await setUp(undefined, { KEY_ENCRYPTION_KEY_FILE: newKeyFile() });
    const newSecret = await rotateWebhookSecret(t.services, webhookId);
    const row = await t.services.db.selectFrom('webhooks').selectAll().where('id', '=', webhookId).executeTakeFirstOrThrow();
    for (const stored of [row.secret, row.previous_secret ?? '']) {
      expect(stored.startsWith('enc:v1:')).toBe(true);
      for (const plain of [secret, newSecret]) expect(stored).not.toContain(plain.slice('whsec_'.length, 30));
    }
    await changePassword(t.services, ref, NEW_PASSWORD);
    expect(await round(t)).toBe(1);
    for (const key of [secret, newSecret]) expect(verifyAt(t.clock.now(), key, receiver.received[0]!)).toMatchObject({ type: 'admin.password_changed' });
  });
});
