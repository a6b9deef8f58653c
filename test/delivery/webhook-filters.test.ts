import { afterEach, describe, expect, it } from 'vitest';
import { changePassword, setAdminEnabled } from '../../src/auth/accounts/admins.js';
import { revokeSigningKey } from '../../src/auth/keys/key-revocation.js';
import { NOTIFYING_EVENTS } from '../../src/auth/notifications.js';
import { listWebhooks } from '../../src/db/queries/webhooks.js';
import { addWebhook } from '../../src/delivery/webhooks.js';
import { UsageError } from '../../src/errors.js';
import { seedAdmin, useTestApps } from '../helpers/app.js';
import { TEST_DIALECTS } from '../helpers/database.js';
import { channelsOf, deliver, LOOPBACK_ENV, startReceiver, verifyAt, type Receiver } from './webhook-receiver.js';

interface Payload {
  readonly type: string;
  readonly timestamp: string;
  readonly data: { readonly school_id: string | null; readonly username: string | null };
}

describe.each(TEST_DIALECTS)('which webhooks an event goes to (%s)', (dialect) => {
  const open = useTestApps(dialect);
  const receivers: Receiver[] = [];
  afterEach(async () => {
    await Promise.all(receivers.splice(0).map((receiver) => receiver.close()));
  });

  it('--events limits the types, --school limits to one school; keys.revoked goes only to webhooks without a school', async () => {
    const t = await open(LOOPBACK_ENV);
    const alice = await seedAdmin(t.services, { schoolId: 'lincoln-high', username: 'alice' });
    const bob = await seedAdmin(t.services, { schoolId: 'roosevelt', username: 'bob' });
    const hook = async (options: { events?: string; schoolId?: string }) => {
      const receiver = await startReceiver();
      receivers.push(receiver);
      const { secret } = await addWebhook(t.services, { url: receiver.url, ...options });
      t.clock.advance(1);
      return { receiver, secret };
    };
    const everything = await hook({});
    const passwords = await hook({ events: ' admin.password_changed ,admin.password_changed' });
    const lincoln = await hook({ schoolId: 'lincoln-high' });
    const lincolnKeys = await hook({ schoolId: 'lincoln-high', events: 'admin.disabled,keys.revoked' });
    expect((await listWebhooks(t.services.db)).map((row) => [row.events, row.school_key])).toEqual([
      ['*', null],
      ['admin.password_changed', null],
      ['*', 'lincoln-high'],
      ['admin.disabled,keys.revoked', 'lincoln-high'],
    ]);

    await changePassword(t.services, { schoolId: alice.schoolId, username: 'alice' }, 'lincoln has a new passphrase');
    t.clock.advance(1);
    await changePassword(t.services, { schoolId: bob.schoolId, username: 'bob' }, 'roosevelt has a new passphrase');
    t.clock.advance(1);
    await setAdminEnabled(t.services, { schoolId: bob.schoolId, username: 'bob' }, false);
    t.clock.advance(1);
    const [key] = await t.services.db.selectFrom('signing_keys').select('kid').execute();
    await revokeSigningKey(t.services, key!.kid);
    t.clock.advance(1);
    expect(await deliver(t.services, channelsOf(t.config))).toBe(4 + 2 + 1 + 0);

    /** What a receiver got, verified with its own secret, in the order the events happened. */
    const got = ({ receiver, secret }: { receiver: Receiver; secret: string }) =>
      receiver.received
        .map((delivery) => verifyAt(t.clock.now(), secret, delivery) as Payload)
        .sort((a, b) => a.timestamp.localeCompare(b.timestamp))
        .map((payload) => `${payload.type} ${payload.data.school_id ?? '-'}`);
    expect(got(everything)).toEqual(['admin.password_changed lincoln-high', 'admin.password_changed roosevelt', 'admin.disabled roosevelt', 'keys.revoked -']);
    expect(got(passwords)).toEqual(['admin.password_changed lincoln-high', 'admin.password_changed roosevelt']);
    expect(got(lincoln)).toEqual(['admin.password_changed lincoln-high']);
    expect(got(lincolnKeys)).toEqual([]);

    // A lincoln event of a listed type does reach the webhook limited to both.
    await setAdminEnabled(t.services, { schoolId: alice.schoolId, username: 'alice' }, false);
    expect(await deliver(t.services, channelsOf(t.config))).toBe(3);
    expect(got(lincolnKeys)).toEqual(['admin.disabled lincoln-high']);
    expect(got(passwords)).toHaveLength(2);
  });

  it('an unknown event type is refused with a UsageError listing the known ones, and nothing is added', async () => {
    const t = await open(LOOPBACK_ENV);
    const refused = addWebhook(t.services, { url: 'http://127.0.0.1:9/hook', events: 'admin.password_changed,login.success,no.such' });
    await expect(refused).rejects.toThrow(UsageError);
    const message = await refused.catch((error: Error) => error.message);
    expect(message).toMatch(/^--events: unknown login\.success, no\.such; the events are /);
    for (const type of Object.keys(NOTIFYING_EVENTS)) expect(message).toContain(type);
    await expect(addWebhook(t.services, { url: 'http://127.0.0.1:9/hook', events: ' , ' })).rejects.toThrow(/^--events: names no event; the events are admin\.password_changed, /);
    await expect(addWebhook(t.services, { url: 'http://127.0.0.1:9/hook', schoolId: 'no-such-school' })).rejects.toThrow(UsageError);
    expect(await listWebhooks(t.services.db)).toEqual([]);
  });
});
