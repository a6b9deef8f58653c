import { describe, expect, it } from 'vitest';
import { PASSWORD, postJson, useTestApps } from '../helpers/app.js';
import { auditEvents } from '../helpers/contract.js';
import { TEST_DIALECTS } from '../helpers/database.js';

// U+FDFA becomes 18 characters under NFKC: what is stored must be bounded after normalization.
const EXPANDING = '\uFDFA';

describe.each(TEST_DIALECTS)('audit events store bounded text from unauthenticated clients on %s', (dialect) => {
  const open = useTestApps(dialect);

  it('caps school_id at 128 and username at 256 characters (plus a marker) after normalization', async () => {
    const t = await open({ LOGIN_THROTTLE: 'off' });
    const response = await postJson(t.app, '/admin/auth/login', { school_id: EXPANDING.repeat(128), username: EXPANDING.repeat(256), password: PASSWORD });
    expect(response.statusCode).toBe(401);
    const [event] = await auditEvents(t, 'login.failure');
    expect([...(event?.school_id ?? '')].length).toBeLessThanOrEqual(129);
    expect([...(event?.username ?? '')].length).toBeLessThanOrEqual(257);
    expect(event?.school_id?.endsWith('…')).toBe(true);
    // What fits is kept as it was.
    const short = await postJson(t.app, '/admin/auth/login', { school_id: 'Lincoln-High', username: 'Mallory', password: PASSWORD });
    expect(short.statusCode).toBe(401);
    expect((await auditEvents(t, 'login.failure'))[1]).toMatchObject({ school_id: 'lincoln-high', username: 'Mallory' });
  });
});
