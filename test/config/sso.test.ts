import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../src/config/config.js';

function problems(env: Record<string, string>): string[] {
  try {
    loadConfig(env);
    return [];
  } catch (error) {
    if (error instanceof ConfigError) return [...error.problems];
    throw error;
  }
}

describe('single sign-on settings', () => {
  it('defaults: PUBLIC_URL is ISSUER, no front ends, 12 h sessions, no plain http', () => {
    const config = loadConfig({ ISSUER: 'https://auth.school.example/' });
    expect(config.sso).toEqual({ publicUrl: 'https://auth.school.example', redirectUris: [], sessionMaxAge: 43_200, allowHttpLoopback: false });
  });

  it('accepts https front ends and http on loopback', () => {
    const config = loadConfig({ SSO_REDIRECT_URIS: 'https://admin.school.example/sso, http://localhost:5173/cb,http://127.0.0.1:3000/cb,http://[::1]:3000/cb', PUBLIC_URL: 'https://auth.school.example' });
    expect(config.sso.redirectUris).toHaveLength(4);
  });

  it.each([
    ['http://admin.school.example/sso', /not https/],
    ['https://user@admin.school.example/sso', /userinfo/],
    ['https://admin.school.example/sso#x', /fragment/],
    ['https://ADMIN.school.example/sso', /canonical form/],
    ['https://admin.school.example', /canonical form/],
    ['admin.school.example/sso', /not an absolute URL/],
    ['http://localhost.evil.example/cb', /not https/],
  ])('refuses SSO_REDIRECT_URIS entry %s, naming the variable', (entry, message) => {
    const found = problems({ SSO_REDIRECT_URIS: entry });
    expect(found).toHaveLength(1);
    expect(found[0]).toMatch(/^SSO_REDIRECT_URIS: /);
    expect(found[0]).toMatch(message);
  });

  it('refuses a bad PUBLIC_URL, SSO_SESSION_MAX_AGE and SSO_ALLOW_HTTP_LOOPBACK', () => {
    const found = problems({ PUBLIC_URL: 'ftp://x', SSO_SESSION_MAX_AGE: '10', SSO_ALLOW_HTTP_LOOPBACK: 'maybe' });
    expect(found.map((problem) => problem.split(/[=:]/)[0])).toEqual(['PUBLIC_URL', 'SSO_SESSION_MAX_AGE', 'SSO_ALLOW_HTTP_LOOPBACK']);
  });
});
