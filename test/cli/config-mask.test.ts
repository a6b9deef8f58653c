import { describe, expect, it } from 'vitest';
import { describeConfig } from '../../src/cli/commands/config.js';
import { maskUrl } from '../../src/config/masked-url.js';
import { loadConfig } from '../../src/config/config.js';

const SECRET = 'S3cr3tXyz';

// Every form in which the pg driver accepts a password: the user-info of the URL, and the
// `password` / `sslpassword` query parameters (any case, any percent-encoding of the name).
const FORMS: Record<string, { url: string; masked: string }> = {
  'user-info': { url: `postgres://u:${SECRET}@h/db`, masked: 'postgres://u:****@h/db' },
  'user-info, percent-encoded': { url: `postgres://u:${SECRET}%40x@h:5433/db`, masked: 'postgres://u:****@h:5433/db' },
  '?password=': { url: `postgres://u@h/db?password=${SECRET}`, masked: 'postgres://u@h/db?password=****' },
  '?sslpassword=': { url: `postgresql://u@h/db?sslmode=require&sslpassword=${SECRET}`, masked: 'postgresql://u@h/db?sslmode=require&sslpassword=****' },
  'parameter name in capitals': { url: `postgres://u@h/db?PASSWORD=${SECRET}`, masked: 'postgres://u@h/db?PASSWORD=****' },
  'parameter name percent-encoded': { url: `postgres://u@h/db?pass%77ord=${SECRET}`, masked: 'postgres://u@h/db?password=****' },
  'parameter given twice': { url: `postgres://u@h/db?password=a&password=${SECRET}`, masked: 'postgres://u@h/db?password=****' },
  'user-info and parameter': { url: `postgres://u:${SECRET}@h/db?password=${SECRET}2`, masked: 'postgres://u:****@h/db?password=****' },
  unparsable: { url: `postgres://u:${SECRET}@[not-a-host/db`, masked: '****' },
};

describe('config check: the database password is masked', () => {
  for (const [form, { url, masked }] of Object.entries(FORMS)) {
    it(`in the form ${form}`, () => {
      expect(maskUrl(url)).toBe(masked);
      const shown = JSON.stringify(describeConfig(loadConfig({ DATABASE_URL: url, ISSUER: 'https://auth.test' })));
      expect(shown).not.toContain(SECRET);
    });
  }

  it('leaves a URL without a password as it is', () => {
    expect(maskUrl('postgres://u@h/db?sslmode=require')).toBe('postgres://u@h/db?sslmode=require');
      });
});
