import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { changePassword } from '../../../src/auth/accounts/admins.js';
import { setAdminEmail } from '../../../src/auth/accounts/admin-email.js';
import { deliverRound } from '../../../src/delivery/delivery-round.js';
import { addWebhook } from '../../../src/delivery/webhooks.js';
import { buildManagementApp } from '../../../src/http/management-app.js';
import { seedAdmin, useTestApps, type TestApp } from '../../helpers/app.js';
import { TEST_DIALECTS } from '../../helpers/database.js';
import { parseExposition, valueOf } from '../../helpers/ops-prometheus.js';

const receivers: Server[] = [];
afterEach(async () => {
  await Promise.all(receivers.splice(0).map((server) => new Promise((resolve) => server.close(resolve))));
});

/** A receiver that answers every delivery with `status`; resolves to its URL. */
async function receiver(status: number): Promise<string> {
  const server = createServer((request, response) => {
    request.resume();
    request.on('end', () => response.writeHead(status).end());
  });
  receivers.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`;
}

async function scrape(t: TestApp) {
  const management = await buildManagementApp(t.services, t.app);
  const exposition = parseExposition((await management.inject({ method: 'GET', url: '/metrics' })).body);
  await management.close();
  return exposition;
}

describe.each(TEST_DIALECTS)('the outbox on /metrics (%s)', (dialect) => {
  const open = useTestApps(dialect);

  it('counts messages by channel and state, and this instance’s attempts by outcome', async () => {
    const t = await open({ WEBHOOK_ALLOW_HTTP_LOOPBACK: 'true' });
    const admin = await seedAdmin(t.services);
    const ref = { schoolId: admin.schoolId, username: admin.username };
    await addWebhook(t.services, { url: await receiver(204) });
    await addWebhook(t.services, { url: await receiver(503) });
    await setAdminEmail(t.services, ref, 'alice@lincoln.example');
    await changePassword(t.services, ref, 'another long passphrase');

    const before = await scrape(t);
    expect(valueOf(before, 'school_auth_outbox_messages', { channel: 'webhook', state: 'pending' })).toBe(2);
    expect(valueOf(before, 'school_auth_outbox_messages', { channel: 'email', state: 'pending' })).toBe(1);

    // No SMTP_URL: the e-mail is a dead letter at once; one webhook takes it, the other fails.
    await deliverRound(t.services, { mailer: undefined, policy: { allowPrivate: ['127.0.0.1'] } }, t.services.outbox, 'metrics-test');
    const after = await scrape(t);
    expect(valueOf(after, 'school_auth_outbox_messages', { channel: 'webhook', state: 'pending' })).toBe(1);
    expect(valueOf(after, 'school_auth_outbox_messages', { channel: 'webhook', state: 'delivered' })).toBe(1);
    expect(valueOf(after, 'school_auth_outbox_messages', { channel: 'email', state: 'dead' })).toBe(1);
    expect(valueOf(after, 'school_auth_outbox_attempts_total', { channel: 'webhook', outcome: 'delivered' })).toBe(1);
    expect(valueOf(after, 'school_auth_outbox_attempts_total', { channel: 'webhook', outcome: 'failed' })).toBe(1);
    expect(valueOf(after, 'school_auth_outbox_attempts_total', { channel: 'email', outcome: 'dead' })).toBe(1);
  });
});
