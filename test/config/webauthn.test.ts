import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/config.js';
import { configProblems } from '../helpers/key-files.js';

/** The variables the problems name: the start-up error must say which setting to fix. */
function named(env: Record<string, string>): string[] {
  return configProblems(env).map((problem) => /^(WEBAUTHN_[A-Z_]+)/.exec(problem)?.[1] ?? problem);
}

const GOOD = { WEBAUTHN_RP_ID: 'school.test', WEBAUTHN_ORIGINS: 'https://admin.school.test' };

describe('WEBAUTHN_* settings', () => {
  it('passkeys are off when WEBAUTHN_RP_ID is unset', () => {
    expect(loadConfig({}).webauthn).toBeUndefined();
  });

  it('parses good settings: origins trimmed, the RP ID itself and its subdomains, a port, http://localhost', () => {
    const config = loadConfig({ WEBAUTHN_RP_ID: 'school.test', WEBAUTHN_ORIGINS: ' https://admin.school.test , https://school.test:8443,https://a.b.school.test' });
    expect(config.webauthn).toEqual({ rpId: 'school.test', rpName: 'school-auth', origins: ['https://admin.school.test', 'https://school.test:8443', 'https://a.b.school.test'] });
    const local = loadConfig({ WEBAUTHN_RP_ID: 'localhost', WEBAUTHN_ORIGINS: 'http://localhost:5173,https://localhost', WEBAUTHN_RP_NAME: 'Lincoln High admin' });
    expect(local.webauthn).toEqual({ rpId: 'localhost', rpName: 'Lincoln High admin', origins: ['http://localhost:5173', 'https://localhost'] });
    expect(loadConfig({ ...GOOD, WEBAUTHN_RP_NAME: 'x'.repeat(64) }).webauthn?.rpName).toHaveLength(64);
  });

  it.each(['127.0.0.1', '10.0.0.5', '::1'])('refuses the IP address %s as RP ID', (rpId) => {
    expect(named({ WEBAUTHN_RP_ID: rpId, WEBAUTHN_ORIGINS: `https://${rpId}` })).toContain('WEBAUTHN_RP_ID');
  });

  it.each(['https://school.test', 'school.test:443', 'school.test/admin', 'School.Test', 'school..test', '-school.test'])(
    'refuses %s as RP ID: a lowercase domain name without scheme, port or path',
    (rpId) => {
      expect(named({ WEBAUTHN_RP_ID: rpId, WEBAUTHN_ORIGINS: 'https://admin.school.test' })).toContain('WEBAUTHN_RP_ID');
    },
  );

  it.each(['http://admin.school.test', 'http://school.test:8080', 'http://127.0.0.1:3000'])('refuses the http origin %s (only localhost goes without TLS)', (origin) => {
    expect(named({ WEBAUTHN_RP_ID: 'school.test', WEBAUTHN_ORIGINS: origin })).toEqual(['WEBAUTHN_ORIGINS']);
  });

  it.each(['https://admin.other.test', 'https://evilschool.test', 'https://school.test.evil.test', 'https://localhost'])(
    'refuses the origin %s outside the RP ID school.test',
    (origin) => {
      expect(named({ WEBAUTHN_RP_ID: 'school.test', WEBAUTHN_ORIGINS: `https://admin.school.test,${origin}` })).toEqual(['WEBAUTHN_ORIGINS']);
    },
  );

  it.each(['https://admin.school.test/login', 'admin.school.test', 'ftp://admin.school.test', 'https://admin.school.test:99999x'])(
    'refuses %s, which is not an origin',
    (origin) => {
      expect(named({ WEBAUTHN_RP_ID: 'school.test', WEBAUTHN_ORIGINS: origin })).toEqual(['WEBAUTHN_ORIGINS']);
    },
  );

  it('refuses WEBAUTHN_ORIGINS or WEBAUTHN_RP_NAME without WEBAUTHN_RP_ID', () => {
    expect(named({ WEBAUTHN_ORIGINS: 'https://admin.school.test' })).toEqual(['WEBAUTHN_ORIGINS']);
    expect(named({ WEBAUTHN_RP_NAME: 'Lincoln High' })).toEqual(['WEBAUTHN_RP_NAME']);
  });

  it('refuses WEBAUTHN_RP_ID without WEBAUTHN_ORIGINS, naming the missing variable', () => {
    expect(named({ WEBAUTHN_RP_ID: 'school.test' })).toEqual(['WEBAUTHN_ORIGINS']);
    expect(named({ WEBAUTHN_RP_ID: 'school.test', WEBAUTHN_ORIGINS: ' , ' })).toEqual(['WEBAUTHN_ORIGINS']);
  });

  it('refuses a WEBAUTHN_RP_NAME over 64 characters', () => {
    expect(named({ ...GOOD, WEBAUTHN_RP_NAME: 'x'.repeat(65) })).toEqual(['WEBAUTHN_RP_NAME']);
  });

  it('reports every bad setting at once', () => {
    expect(named({ WEBAUTHN_RP_ID: '10.0.0.5', WEBAUTHN_ORIGINS: 'http://admin.school.test', WEBAUTHN_RP_NAME: 'x'.repeat(65) }).sort())
      .toEqual(['WEBAUTHN_ORIGINS', 'WEBAUTHN_RP_ID', 'WEBAUTHN_RP_NAME']);
  });

  it('an https origin is accepted exactly when its host is the RP ID or a subdomain of it', () => {
    const host = fc.oneof(fc.domain(), fc.domain().map((domain) => `${domain}.school.test`), fc.domain().map((domain) => `${domain}school.test`));
    fc.assert(
      fc.property(host, (candidate) => {
        const inside = candidate === 'school.test' || candidate.endsWith('.school.test');
        expect(named({ WEBAUTHN_RP_ID: 'school.test', WEBAUTHN_ORIGINS: `https://${candidate}` })).toEqual(inside ? [] : ['WEBAUTHN_ORIGINS']);
      }),
    );
  });
});
