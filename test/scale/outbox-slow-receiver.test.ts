/**
 * A receiver that never answers holds a delivery open; sign-ins, refreshes and the change that
 * wrote the message answer meanwhile, because they only write a row (the real server process).
 */
import { afterEach, describe, expect, it } from 'vitest';
import { freePort } from '../helpers/free-port.js';
import { cleanupOps, loginHttp, seedWithCli, sleep, startServer } from '../helpers/ops-server.js';
import { startWebhookReceiver, type WebhookReceiver } from '../helpers/webhook-receiver.js';

const PASSWORD = 'correct horse battery staple';
const receivers: WebhookReceiver[] = [];

afterEach(async () => {
  await Promise.all(receivers.splice(0).map((receiver) => receiver.close()));
  await cleanupOps();
});

async function until(condition: () => boolean, what: string, deadlineMs = 30_000): Promise<void> {
  const deadline = Date.now() + deadlineMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(50);
  }
}

describe('a receiver that never answers', () => {
  it('slows no sign-in, refresh or password change while its delivery is held open', { timeout: 120_000 }, async () => {
    const port = await freePort();
    const receiver = await startWebhookReceiver(port, { delayMs: 600_000 });
    receivers.push(receiver);
    const server = await startServer({ WEBHOOK_ALLOW_HTTP_LOOPBACK: 'true', WEBHOOK_ALLOW_PRIVATE: '127.0.0.1' });
    await seedWithCli(server, PASSWORD);
    const added = await server.cli(['webhooks', 'add', '--url', `http://127.0.0.1:${port}/hook`]);
    expect(added.code, added.stderr).toBe(0);

    const first = await loginHttp(server, PASSWORD);
    expect(first.status).toBe(200);
    const { access_token, refresh_token } = (await first.json()) as { access_token: string; refresh_token: string };
    const changed = await fetch(`${server.url}/admin/auth/password`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${access_token}` },
      body: JSON.stringify({ current_password: PASSWORD, new_password: 'a new and longer passphrase' }),
    });
    expect(changed.status).toBe(204);
    await until(() => receiver.inFlight() === 1, 'the delivery to reach the receiver');

    // The delivery is open now (it fails only at its 5 s timeout): the hot paths answer anyway.
    const refreshed = await fetch(`${server.url}/auth/refresh`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ refresh_token }) });
    expect(refreshed.status).toBe(200);
    const again = await loginHttp(server, 'a new and longer passphrase');
    expect(again.status).toBe(200);
    expect(receiver.inFlight()).toBe(1);
    expect(receiver.received.map((request) => JSON.parse(request.body) as { type: string }).map((body) => body.type)).toEqual(['admin.password_changed']);
  });
});
