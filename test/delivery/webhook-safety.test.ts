import { performance } from 'node:perf_hooks';
import { afterEach, describe, expect, it } from 'vitest';
import { CLI_CONTEXT, recordEvent } from '../../src/auth/events.js';
import { isReachable } from '../../src/delivery/address-guard.js';
import { postWebhook } from '../../src/delivery/webhook-post.js';
import { addWebhook } from '../../src/delivery/webhooks.js';
import { UsageError } from '../../src/errors.js';
import { useTestApps, type TestApp } from '../helpers/app.js';
import { attemptsOf, channelsOf, deliver, LOOPBACK_ENV, outboxRows, startReceiver, type Answer, type Receiver } from './webhook-receiver.js';

const receivers: Receiver[] = [];
afterEach(async () => {
  await Promise.all(receivers.splice(0).map((receiver) => receiver.close()));
});

async function receiver(answer?: Answer): Promise<Receiver> {
  const started = await startReceiver(answer);
  receivers.push(started);
  return started;
}

describe('isReachable: only public addresses, and what WEBHOOK_ALLOW_PRIVATE names', () => {
  const none = { allowPrivate: [] };
  it.each(['127.0.0.1', '::ffff:127.0.0.1', '::ffff:7f00:1', '::1', '169.254.169.254', '::ffff:169.254.169.254', '10.1.2.3', '172.16.0.1', '192.168.1.1', '100.64.0.1', '0.0.0.0', 'fd00::1', 'fe80::1', '64:ff9b::a9fe:a9fe'])('%s is refused', (address) => {
    expect(isReachable(address, none)).toBe(false);
  });
  it.each(['93.184.216.34', '8.8.8.8', '2606:4700::1111'])('%s (public) is accepted', (address) => {
    expect(isReachable(address, none)).toBe(true);
  });
  it('an address or range named is accepted, in either notation, and nothing beside it', () => {
    expect(isReachable('::ffff:127.0.0.1', { allowPrivate: ['127.0.0.1'] })).toBe(true);
    expect(isReachable('127.0.0.2', { allowPrivate: ['127.0.0.1'] })).toBe(false);
    expect(isReachable('10.200.0.9', { allowPrivate: ['10.0.0.0/8'] })).toBe(true);
    expect(isReachable('::ffff:10.200.0.9', { allowPrivate: ['10.0.0.0/8'] })).toBe(true);
    expect(isReachable('11.0.0.1', { allowPrivate: ['10.0.0.0/8'] })).toBe(true); // public anyway
    expect(isReachable('192.168.0.1', { allowPrivate: ['10.0.0.0/8'] })).toBe(false);
    expect(isReachable('::1', { allowPrivate: ['127.0.0.0/8'] })).toBe(false);
    expect(isReachable('169.254.169.254', { allowPrivate: ['metadata.internal'] })).toBe(false);
  });
});

describe('webhooks add: https only, plain http only to loopback with WEBHOOK_ALLOW_HTTP_LOOPBACK', () => {
  const open = useTestApps('sqlite');
  it('refuses http to a non-loopback host with or without the setting, and http to loopback without it', async () => {
    const strict = await open();
    const refused = /^--url: webhook URLs must be https \(plain http only to a loopback address with WEBHOOK_ALLOW_HTTP_LOOPBACK=true\)$/;
    for (const url of ['http://127.0.0.1:8080/hook', 'http://localhost/hook', 'http://[::1]/hook', 'http://hooks.example.com/hook']) {
      await expect(addWebhook(strict.services, { url })).rejects.toThrow(refused);
    }
    await expect(addWebhook(strict.services, { url: 'not a url' })).rejects.toThrow(UsageError);
    await expect(addWebhook(strict.services, { url: 'https://hooks.example.com/hook' })).resolves.toMatchObject({ id: expect.stringMatching(/^wh_/) });

    const loose = await open({ WEBHOOK_ALLOW_HTTP_LOOPBACK: 'true' });
    for (const url of ['http://hooks.example.com/hook', 'http://10.0.0.1/hook', 'http://127.0.0.1.nip.io/hook', 'ftp://127.0.0.1/hook']) {
      await expect(addWebhook(loose.services, { url })).rejects.toThrow(refused);
    }
    for (const url of ['http://127.0.0.1:8080/hook', 'http://localhost/hook', 'http://[::1]/hook']) await addWebhook(loose.services, { url });
    expect(await loose.services.db.selectFrom('webhooks').select('url').orderBy('url').execute()).toHaveLength(3);
  });
});

describe('where a delivery may go', () => {
  const open = useTestApps('sqlite');

  /** An app with `env`, a webhook to `url`, and one message to it written by a real event. */
  async function oneMessage(env: Record<string, string>, url: string): Promise<TestApp> {
    const t = await open(env);
    await addWebhook(t.services, { url });
    await recordEvent(t.services.db, t.clock, CLI_CONTEXT, { type: 'keys.revoked', detail: 'key k1 revoked' });
    return t;
  }
  async function attemptOnce(t: TestApp) {
    expect(await deliver(t.services, channelsOf(t.config))).toBe(1);
    const [message] = await outboxRows(t.services.db);
    const attempts = await attemptsOf(t.services.db, message!.id);
    expect(attempts).toHaveLength(1);
    return { message: message!, attempt: attempts[0]! };
  }

  it('127.0.0.1 without WEBHOOK_ALLOW_PRIVATE: refused, naming the setting, and the receiver gets nothing', async () => {
    const hook = await receiver();
    const t = await oneMessage({ WEBHOOK_ALLOW_HTTP_LOOPBACK: 'true' }, hook.url);
    const { message, attempt } = await attemptOnce(t);
    expect(attempt).toMatchObject({ ok: 0, status: null, error: '127.0.0.1 is a private address: name it in WEBHOOK_ALLOW_PRIVATE to allow it' });
    expect(message).toMatchObject({ state: 'pending', attempts: 1 });
    expect(hook.received).toEqual([]);
  });

  it('localhost, a name resolving to loopback, is refused unless WEBHOOK_ALLOW_PRIVATE names it (or its address)', async () => {
    const hook = await receiver();
    const url = `http://localhost:${hook.port}/hook`;
    for (const allow of [undefined, '10.0.0.0/8', '::1']) {
      const t = await oneMessage({ WEBHOOK_ALLOW_HTTP_LOOPBACK: 'true', ...(allow === undefined ? {} : { WEBHOOK_ALLOW_PRIVATE: allow }) }, url);
      const { attempt } = await attemptOnce(t);
      expect(attempt.error).toMatch(/^localhost resolves to (127\.0\.0\.1|::1), a private address: name it in WEBHOOK_ALLOW_PRIVATE to allow it$/);
    }
    expect(hook.received).toEqual([]);
    for (const allow of ['localhost', 'LOCALHOST', '127.0.0.1']) {
      const t = await oneMessage({ WEBHOOK_ALLOW_HTTP_LOOPBACK: 'true', WEBHOOK_ALLOW_PRIVATE: allow }, url);
      expect((await attemptOnce(t)).message.state).toBe('delivered');
    }
    expect(hook.received).toHaveLength(3);
  });

  it('a CIDR range in WEBHOOK_ALLOW_PRIVATE allows the addresses inside it only', async () => {
    const hook = await receiver();
    const outside = await oneMessage({ WEBHOOK_ALLOW_HTTP_LOOPBACK: 'true', WEBHOOK_ALLOW_PRIVATE: '127.0.1.0/24, 10.0.0.0/8' }, hook.url);
    expect((await attemptOnce(outside)).attempt.error).toMatch(/WEBHOOK_ALLOW_PRIVATE/);
    expect(hook.received).toEqual([]);
    const inside = await oneMessage({ WEBHOOK_ALLOW_HTTP_LOOPBACK: 'true', WEBHOOK_ALLOW_PRIVATE: '10.0.0.0/8,127.0.0.0/8' }, hook.url);
    expect((await attemptOnce(inside)).attempt).toMatchObject({ ok: 1, status: 204, error: null });
    expect(hook.received).toHaveLength(1);
  });

  it('a 302 is not followed: the target receives nothing, the attempt fails with the 302 recorded', async () => {
    const target = await receiver();
    const redirecting = await receiver((_request, _n, response) => {
      response.writeHead(302, { location: target.url }).end();
      return 'handled';
    });
    const t = await oneMessage(LOOPBACK_ENV, redirecting.url);
    const { message, attempt } = await attemptOnce(t);
    expect(attempt).toMatchObject({ ok: 0, status: 302, error: 'HTTP 302' });
    expect(message).toMatchObject({ state: 'pending', last_error: 'HTTP 302' });
    expect(redirecting.received).toHaveLength(1);
    expect(target.received).toEqual([]);
  });

  it('an answer of several MiB, or one that never ends, is read to 64 KiB at most; the attempt completes with a short error', async () => {
    const chunk = Buffer.alloc(64 * 1024, 'x');
    const endless = await receiver((_request, _n, response) => {
      response.writeHead(500, { 'content-type': 'text/plain' });
      const more = () => {
        while (!response.destroyed && response.write(chunk));
        if (!response.destroyed) response.once('drain', more);
      };
      more();
      return 'handled';
    });
    const huge = await receiver((_request, _n, response) => {
      response.writeHead(200, { 'content-type': 'text/plain' }).end(Buffer.alloc(6 * 1024 * 1024, 'y'));
      return 'handled';
    });
    const policy = { allowPrivate: ['127.0.0.1'] };
    const read = await postWebhook(new URL(huge.url), '{}', {}, policy);
    expect(read.status).toBe(200);
    expect(read.answer.length).toBe(64 * 1024);

    const t = await oneMessage(LOOPBACK_ENV, endless.url);
    const started = performance.now();
    const { attempt } = await attemptOnce(t);
    expect(performance.now() - started).toBeLessThan(4000); // well before the 5 s timeout: not read to an end
    expect(attempt).toMatchObject({ ok: 0, status: 500 });
    expect(attempt.error).toBe(`HTTP 500: ${'x'.repeat(200)}`);
  });

  it('a receiver that never answers fails the attempt after about 5 s', async () => {
    const silent = await receiver(() => 'hang');
    const t = await oneMessage(LOOPBACK_ENV, silent.url);
    const started = performance.now();
    const { message, attempt } = await attemptOnce(t);
    const elapsed = performance.now() - started;
    expect(elapsed).toBeGreaterThan(4900);
    expect(elapsed).toBeLessThan(15_000);
    expect(silent.received).toHaveLength(1);
    expect(attempt).toMatchObject({ ok: 0, status: null, error: 'no answer within 5 s' });
    expect(message).toMatchObject({ state: 'pending', attempts: 1 });
  });
});
