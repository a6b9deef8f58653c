import { describe, expect } from 'vitest';
import { CLI_CONTEXT, recordEvent } from '../../src/auth/events.js';
import { NOTIFYING_EVENTS } from '../../src/auth/notifications.js';
import { addWebhook } from '../../src/delivery/webhooks.js';
import { TestClock } from '../helpers/clock.js';
import { cliTest as test, ISO_TIME, ok, parseJson, SLOW } from '../helpers/cli-workspace.js';
import { useKeyFiles } from '../helpers/key-files.js';
import { channelsOf, deliver, LOOPBACK_ENV, startReceiver, verifyAt } from './webhook-receiver.js';

const newKeyFile = useKeyFiles();
const ADDED = /^webhook (wh_[A-Za-z0-9_-]{12}) added; its signing secret \(shown once, give it to the receiver\):\n(whsec_[A-Za-z0-9+/]{43}=)\n$/;
const ROTATED = /^webhook (wh_[A-Za-z0-9_-]{12}): new signing secret \(the old one also signs for 24 hours\):\n(whsec_[A-Za-z0-9+/]{43}=)\n$/;

interface Delivery {
  id: string;
  type: string;
  channel: string;
  target: string;
  state: string;
  created_at: string;
  next_attempt_at: string | null;
  attempts: string[];
}

describe.concurrent('school-auth webhooks', () => {
  test('add prints the secret once; it is stored sealed under KEY_ENCRYPTION_KEY_FILE; list never prints it; rotate-secret signs with both', SLOW, async ({ ws }) => {
    const receiver = await startReceiver();
    try {
      const env = { ...LOOPBACK_ENV, KEY_ENCRYPTION_KEY_FILE: newKeyFile() };
      const app = await ws.openApp(env);
      const [, id = '', secret = ''] = ADDED.exec(ok(await ws.run(['webhooks', 'add', '--url', receiver.url, '--events', 'keys.revoked'], { env })).stdout) ?? [];
      expect(secret).toMatch(/^whsec_/);

      const stored = await app.services.db.selectFrom('webhooks').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
      expect(stored.secret.startsWith('enc:v1:')).toBe(true);
      expect(stored.secret).not.toContain(secret.slice('whsec_'.length, 30));
      expect(stored).toMatchObject({ url: receiver.url, events: 'keys.revoked', school_key: null, previous_secret: null });

      const listed = ok(await ws.run(['webhooks', 'list', '--json'], { env }));
      expect(parseJson(listed)).toEqual([{ id, url: receiver.url, events: 'keys.revoked', school: '*', previous_secret_until: null, created_at: expect.stringMatching(ISO_TIME) }]);
      const table = ok(await ws.run(['webhooks', 'list'], { env })).stdout;
      expect(table).toContain(id);
      for (const printed of [listed.stdout, table]) expect(printed).not.toMatch(/whsec_|enc:v1:/);

      const [, rotatedId, newSecret = ''] = ROTATED.exec(ok(await ws.run(['webhooks', 'rotate-secret', id], { env })).stdout) ?? [];
      expect(rotatedId).toBe(id);
      expect(newSecret).not.toBe(secret);
      const rotated = await app.services.db.selectFrom('webhooks').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
      for (const sealed of [rotated.secret, rotated.previous_secret ?? '']) {
        expect(sealed.startsWith('enc:v1:')).toBe(true);
        for (const plain of [secret, newSecret]) expect(sealed).not.toContain(plain.slice('whsec_'.length, 30));
      }
      const relisted = ok(await ws.run(['webhooks', 'list', '--json'], { env }));
      expect(parseJson<{ previous_secret_until: string }[]>(relisted)[0]?.previous_secret_until).toBe(new Date(Number(rotated.previous_until)).toISOString());
      expect(relisted.stdout).not.toMatch(/whsec_|enc:v1:/);

      // The secrets printed are the ones that sign: the in-process instance opens the sealed ones.
      await recordEvent(app.services.db, app.services.clock, CLI_CONTEXT, { type: 'keys.revoked', detail: 'key k1 revoked' });
      expect(await deliver(app.services, channelsOf(app.config))).toBe(1);
      const [delivery] = receiver.received;
      for (const key of [secret, newSecret]) expect(verifyAt(Date.now(), key, delivery!)).toMatchObject({ type: 'keys.revoked' });

      expect(ok(await ws.run(['webhooks', 'remove', id], { env })).stdout).toBe(`webhook ${id} removed\n`);
      expect(ok(await ws.run(['webhooks', 'list'], { env })).stdout).toBe('no webhooks\n');
    } finally {
      await receiver.close();
    }
  });

  test('add refuses plain http outside loopback, loopback without WEBHOOK_ALLOW_HTTP_LOOPBACK, and unknown event types', SLOW, async ({ ws }) => {
    await ws.app();
    const remote = await ws.run(['webhooks', 'add', '--url', 'http://hooks.example.com/in'], { env: { WEBHOOK_ALLOW_HTTP_LOOPBACK: 'true' } });
    const refusal = 'school-auth: --url: webhook URLs must be https (plain http only to a loopback address with WEBHOOK_ALLOW_HTTP_LOOPBACK=true)\n';
    expect(remote).toMatchObject({ code: 1, stdout: '', stderr: refusal });
    expect(await ws.run(['webhooks', 'add', '--url', 'http://127.0.0.1:8080/in'])).toMatchObject({ code: 1, stdout: '', stderr: refusal });
    const unknown = await ws.run(['webhooks', 'add', '--url', 'https://hooks.example.com/in', '--events', 'admin.password_changed,login.sucess']);
    expect(unknown).toMatchObject({ code: 1, stdout: '' });
    expect(unknown.stderr).toBe(`school-auth: --events: unknown login.sucess; the events are ${Object.keys(NOTIFYING_EVENTS).join(', ')}\n`);
    expect(ok(await ws.run(['webhooks', 'list', '--json'])).stdout).toBe('[]\n');
  });

  test('deliveries --failed lists dead letters with every attempt; redeliver puts one back and the next round delivers it; a pending one is refused', SLOW, async ({ ws }) => {
    let answer = 500;
    const receiver = await startReceiver(() => answer);
    try {
      const app = await ws.openApp(LOOPBACK_ENV);
      await addWebhook(app.services, { url: receiver.url });
      // The instance's events and deliveries on a clock the test moves (the system clock would move
      // on between writing a message and a round asking what is due); the CLI runs on the system clock.
      const clock = new TestClock(Date.now());
      const deps = { ...app.services, clock };
      const notify = (detail: string) => recordEvent(app.services.db, clock, CLI_CONTEXT, { type: 'keys.revoked', detail });

      await notify('first');
      expect(await deliver(deps, channelsOf(app.config))).toBe(1);
      clock.advance(25 * 3600);
      expect(await deliver(deps, channelsOf(app.config))).toBe(1);
      answer = 200;
      await notify('second');
      expect(await deliver(deps, channelsOf(app.config))).toBe(1);
      await notify('third');
      const rows = await app.services.db.selectFrom('outbox').select(['id', 'state', 'payload']).execute();
      const byDetail = (detail: string) => rows.find((row) => (JSON.parse(row.payload) as { data: { detail: string } }).data.detail === detail);
      const [dead, delivered, pending] = [byDetail('first'), byDetail('second'), byDetail('third')];
      expect([dead?.state, delivered?.state, pending?.state]).toEqual(['dead', 'delivered', 'pending']);

      const failed = parseJson<Delivery[]>(ok(await ws.run(['webhooks', 'deliveries', '--failed', '--json'])));
      expect(failed).toEqual([{ id: dead!.id, type: 'keys.revoked', channel: 'webhook', target: expect.stringMatching(/^wh_/), state: 'dead', created_at: expect.stringMatching(ISO_TIME), next_attempt_at: null, attempts: [expect.any(String), expect.any(String)] }]);
      for (const attempt of failed[0]!.attempts) expect(attempt).toMatch(/^\d{4}-\d\d-\d\dT[\d:.]+Z failed 500 HTTP 500: receiver says 500$/);
      const all = parseJson<Delivery[]>(ok(await ws.run(['webhooks', 'deliveries', '--json'])));
      expect(Object.fromEntries(all.map((row) => [row.id, `${row.state} ${row.attempts.length}`]))).toEqual({
        [pending!.id]: 'pending 0',
        [delivered!.id]: 'delivered 1',
        [dead!.id]: 'dead 2',
      });
      expect(all.find((row) => row.id === delivered!.id)?.attempts[0]).toMatch(/ ok 200$/);

      const refused = await ws.run(['webhooks', 'redeliver', pending!.id]);
      expect(refused).toMatchObject({ code: 1, stdout: '' });
      expect(refused.stderr).toMatch(new RegExp(`^school-auth: message ${pending!.id} is still being delivered \\(next attempt \\S+Z\\)\\n$`));
      expect(await ws.run(['webhooks', 'redeliver', 'msg_nope'])).toMatchObject({ code: 1, stderr: 'school-auth: no message "msg_nope"; see webhooks deliveries\n' });
      expect(ok(await ws.run(['webhooks', 'redeliver', dead!.id])).stdout).toBe(`message ${dead!.id} queued again; the server sends it within 30 s\n`);

      expect(await deliver(deps, channelsOf(app.config))).toBe(2);
      const redelivered = await app.services.db.selectFrom('outbox').selectAll().where('id', '=', dead!.id).executeTakeFirstOrThrow();
      expect(redelivered).toMatchObject({ state: 'delivered', attempts: 3 });
      expect(receiver.received.filter((delivery) => delivery.headers['webhook-id'] === dead!.id)).toHaveLength(3);
      expect(ok(await ws.run(['webhooks', 'deliveries', '--failed'])).stdout).toBe('no failed deliveries\n');
    } finally {
      await receiver.close();
    }
  });
});
