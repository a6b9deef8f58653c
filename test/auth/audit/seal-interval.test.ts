import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../../src/config/config.js';

describe('AUDIT_SEAL_INTERVAL', () => {
  it('defaults to 5 seconds and takes a whole number of seconds from 1 to 3600', () => {
    expect(loadConfig({}).auditSealInterval).toBe(5);
    expect(loadConfig({ AUDIT_SEAL_INTERVAL: '1' }).auditSealInterval).toBe(1);
    expect(loadConfig({ AUDIT_SEAL_INTERVAL: '3600' }).auditSealInterval).toBe(3600);
    for (const bad of ['0', '3601', '1.5', 'soon']) {
      expect(() => loadConfig({ AUDIT_SEAL_INTERVAL: bad })).toThrow(ConfigError);
      expect(() => loadConfig({ AUDIT_SEAL_INTERVAL: bad })).toThrow(`AUDIT_SEAL_INTERVAL=${JSON.stringify(bad)}: expected a whole number from 1 to 3600`);
    }
  });
});
