import { afterEach, describe, expect, it } from 'vitest';
import { revokeSigningKey } from '../../src/auth/keys/key-revocation.js';
import { loadConfig } from '../../src/config/config.js';
import { addWebhook } from '../../src/delivery/webhooks.js';
import { useTestApps } from '../helpers/app.js';
import { TEST_DIALECTS } from '../helpers/database.js';
import { useKeyFiles } from '../helpers/key-files.js';
import { LOOPBACK_ENV, attemptsOf, channelsOf, deliver, outboxRows, startReceiver, type Receiver } from './webhook-receiver.js';

const newKeyFile = useKeyFiles();
const receivers: Receiver[] = [];
afterEach(async () => {
  await Promise.all(receivers.splice(0).map((receiver) => receiver.close()));
});

describe.each(TEST_DIALECTS)('a webhook secret this instance cannot open (%s)', (dialect) => {
  const open = useTestApps(dialect);

  it('fails the attempt, naming KEY_ENCRYPTION_KEY_FILE, rather than the whole round', async () => {
    const t = await open({ ...LOOPBACK_ENV, KEY_ENCRYPTION_KEY_FILE: newKeyFile() });
    const receiver = await startReceiver();
    receivers.push(receiver);
    await addWebhook(t.services, { url: receiver.url });
    const [key] = await t.services.db.selectFrom('signing_keys').select('kid').execute();
    await revokeSigningKey(t.services, key?.kid ?? '');
    // Another instance, configured with another key file, delivers.
    const other = { ...t.services, config: loadConfig({ ...LOOPBACK_ENV, KEY_ENCRYPTION_KEY_FILE: newKeyFile() }) };
    expect(await deliver(other, channelsOf(other.config))).toBe(1);
    const [message] = await outboxRows(t.services.db);
    expect(message).toMatchObject({ state: 'pending', attempts: 1 });
    expect(message?.last_error).toMatch(/KEY_ENCRYPTION_KEY_FILE/);
    expect(await attemptsOf(t.services.db, message?.id ?? '')).toMatchObject([{ ok: 0 }]);
    expect(receiver.received).toEqual([]);
  });
});
