import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createTestApp, postJson, seedAdmin, type TestApp } from '../helpers/app.js';
import { TEST_DIALECTS } from '../helpers/database.js';

describe.each(TEST_DIALECTS)('POST /admin/auth/login on %s', (dialect) => {
  let t: TestApp;
  beforeEach(async () => {
    t = await createTestApp({}, dialect);
  });
  afterEach(() => t.close());

  it('answers 200 with the contract fields, the stored identity and no-store headers', async () => {
    const admin = await seedAdmin(t.services, { schoolId: 'Lincoln-High', username: 'Alice' });
    const response = await postJson(t.app, '/admin/auth/login', { school_id: 'lincoln-high', username: 'ALICE', password: admin.password });
    expect(response.statusCode).toBe(200);
    expect(response.headers['cache-control']).toBe('no-store');
    expect(response.headers.pragma).toBe('no-cache');
    const body = response.json();
    expect(body).toMatchObject({ expires_in: 900, school_id: 'Lincoln-High', username: 'Alice', token_type: 'bearer', refresh_expires_in: 43200 });
    expect(typeof body.access_token).toBe('string');
    expect(body.refresh_token).toMatch(/^[A-Za-z0-9_-]{43,}$/);
  });

  it('refuses every failure reason with the same bytes', async () => {
    const admin = await seedAdmin(t.services);
    const attempts = [
      { school_id: 'no-such-school', username: admin.username, password: admin.password },
      { school_id: admin.schoolId, username: 'nobody', password: admin.password },
      { school_id: admin.schoolId, username: admin.username, password: 'wrong password!!' },
    ];
    const answers = await Promise.all(attempts.map((body) => postJson(t.app, '/admin/auth/login', body)));
    for (const answer of answers) {
      expect(answer.statusCode).toBe(401);
      expect(answer.body).toBe('{"detail":"Incorrect username or password"}');
      expect(answer.headers['www-authenticate']).toBe('Bearer');
    }
  });
});
