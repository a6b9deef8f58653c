import { performance } from 'node:perf_hooks';
import { describe, expect, it } from 'vitest';
import { addSsoAdmin } from '../../../src/auth/sso/links.js';
import { setSso } from '../../../src/auth/sso/settings.js';
import { PASSWORD, postJson, seedAdmin, useTestApps } from '../../helpers/app.js';

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] ?? Number.NaN;
}

describe('a password login to an admin without a password (single sign-on only)', () => {
  const open = useTestApps('sqlite');

  it('costs what a login to an unknown account costs: no timing oracle for who signs in only through the IdP', { timeout: 60_000 }, async () => {
    const t = await open({ LOGIN_THROTTLE: 'off', ARGON2_ITERATIONS: '8' });
    const admin = await seedAdmin(t.services);
    await setSso(t.services, admin.schoolId, { provider: 'oidc', issuer: 'https://idp.district.example', clientId: 'c', clientSecret: 's' });
    await addSsoAdmin(t.services, { schoolId: admin.schoolId, username: 'carol' }, 'carol@district.example');
    const attempt = async (username: string) => {
      const started = performance.now();
      const response = await postJson(t.app, '/admin/auth/login', { school_id: admin.schoolId, username, password: `${PASSWORD}!` });
      expect(response.statusCode).toBe(401);
      return performance.now() - started;
    };
    const unknown: number[] = [];
    const ssoOnly: number[] = [];
    for (let round = 0; round < 5; round += 1) {
      unknown.push(await attempt('nobody'));
      ssoOnly.push(await attempt('carol'));
    }
    // Both run one argon2id verification; a refusal without one would take a small fraction of it.
    expect(median(ssoOnly)).toBeGreaterThan(median(unknown) * 0.5);
  });
});
