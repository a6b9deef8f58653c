import { describe, expect, it } from 'vitest';
import { buildManagementApp } from '../../../src/http/management-app.js';
import { seedAdmin, useTestApps, type TestApp } from '../../helpers/app.js';
import { TEST_DIALECTS } from '../../helpers/database.js';
import { parseExposition, valueOf } from '../../helpers/ops-prometheus.js';
import { adminWithTotp, passwordStep, totpCode, verify, wrongCode } from '../../helpers/mfa.js';

async function scrape(t: TestApp) {
  const management = await buildManagementApp(t.services, t.app);
  try {
    return parseExposition((await management.inject({ method: 'GET', url: '/metrics' })).body);
  } finally {
    await management.close();
  }
}

describe.each(TEST_DIALECTS)('second-factor metrics on %s', (dialect) => {
  const open = useTestApps(dialect);

  it('count second-factor verifications by outcome, and logins that asked for one', async () => {
    const t = await open();
    const admin = await seedAdmin(t.services);
    const { secret } = await adminWithTotp(t, admin);
    const mfaToken = await passwordStep(t, admin);
    expect((await verify(t, mfaToken, wrongCode(t, secret))).statusCode).toBe(401);
    expect((await verify(t, mfaToken, totpCode(t, secret))).statusCode).toBe(200);
    const exposition = await scrape(t);
    expect(exposition.types.get('school_auth_mfa_verifications_total')).toBe('counter');
    expect(valueOf(exposition, 'school_auth_mfa_verifications_total', { outcome: 'refused' })).toBe(1);
    expect(valueOf(exposition, 'school_auth_mfa_verifications_total', { outcome: 'success' })).toBe(1);
    expect(valueOf(exposition, 'school_auth_logins_total', { outcome: 'second_factor_required' })).toBe(1);
  });
});
