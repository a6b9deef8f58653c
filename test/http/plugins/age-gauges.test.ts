import { afterEach, describe, expect, it, vi } from 'vitest';
import { createSigningKey } from '../../../src/auth/keys/signing-keys.js';
import { buildManagementApp } from '../../../src/http/management-app.js';
import { nowSeconds } from '../../../src/runtime/clock.js';
import { useTestApps, type TestApp } from '../../helpers/app.js';
import { recordEvents, sealAll } from '../../helpers/audit.js';
import { TEST_DIALECTS } from '../../helpers/database.js';
import { parseExposition, valueOf } from '../../helpers/ops-prometheus.js';

async function scrape(t: TestApp): Promise<{ keyAge: number | undefined; unsealed: number | undefined }> {
  const management = await buildManagementApp(t.services, t.app);
  const exposition = parseExposition((await management.inject({ method: 'GET', url: '/metrics' })).body);
  await management.close();
  return {
    keyAge: valueOf(exposition, 'school_auth_signing_key_age_seconds'),
    unsealed: valueOf(exposition, 'school_auth_audit_unsealed_oldest_seconds'),
  };
}

/** Every statement from here on is refused, as while the database is unreachable. */
function failDatabase(t: TestApp): void {
  const refused = () => Promise.reject(new Error('connect ECONNREFUSED 127.0.0.1:5432'));
  const query: object = new Proxy(
    {},
    {
      get: (_target, property) => (property === 'execute' || property === 'executeTakeFirst' || property === 'executeTakeFirstOrThrow' ? refused : () => query),
    },
  );
  vi.spyOn(t.services.database.db, 'selectFrom').mockImplementation(() => query as never);
}

afterEach(() => {
  vi.restoreAllMocks();
});

describe.each(TEST_DIALECTS)('the signing key’s and the audit sealer’s age on /metrics (%s)', (dialect) => {
  const open = useTestApps(dialect);

  it('reads the age of the key that signs now, and starts again from a rotated key once it signs', async () => {
    const t = await open();
    // The first start created the key at the clock's time.
    expect((await scrape(t)).keyAge).toBe(0);
    t.clock.advance(3600);
    expect((await scrape(t)).keyAge).toBe(3600);

    // A rotated key waiting for its activation time does not sign yet: the old key keeps ageing.
    const now = nowSeconds(t.clock);
    await createSigningKey(t.services.db, t.config.jwtAlg, now, now + 600);
    t.clock.advance(300);
    expect((await scrape(t)).keyAge).toBe(3900);
    t.clock.advance(300);
    expect((await scrape(t)).keyAge).toBe(600);
  });

  it('reads the age of the oldest unsealed event, 0 once the sealer has sealed them all', async () => {
    const t = await open();
    await sealAll(t.services);
    expect((await scrape(t)).unsealed).toBe(0);

    t.clock.advance(10);
    await recordEvents(t.services, 3, (seconds) => t.clock.advance(seconds));
    t.clock.advance(42);
    // Three events one second apart, the oldest written 45 seconds ago.
    expect((await scrape(t)).unsealed).toBe(45);
    await sealAll(t.services);
    expect((await scrape(t)).unsealed).toBe(0);
  });

  it('keeps the last figures while the database does not answer, and /metrics still answers', async () => {
    const t = await open();
    await recordEvents(t.services, 1, (seconds) => t.clock.advance(seconds));
    t.clock.advance(119);
    expect(await scrape(t)).toEqual({ keyAge: 120, unsealed: 120 });

    failDatabase(t);
    t.clock.advance(500);
    expect(await scrape(t)).toEqual({ keyAge: 120, unsealed: 120 });
  });
});
