import { describe, expect, it } from 'vitest';
import { createLogger } from '../../../src/runtime/logger.js';

describe('logs and second factors', () => {
  it('redact codes, mfa_tokens, TOTP secrets and recovery codes wherever a log line carries them', () => {
    const lines: string[] = [];
    const logger = createLogger('info', { write: (line: string) => void lines.push(line) });
    logger.info(
      {
        code: '492039',
        mfa_token: 'Vq2mfaTokenValue',
        secret: 'JBSWY3DPEHPK3PXP',
        recovery_codes: ['k3m9x-aaaaa-bbbbb-ccccc'],
        body: { code: '118302', mfa_token: 'Other-mfa-token' },
        req: { body: { code: '777111', mfa_token: 'Third-mfa-token' } },
      },
      'second factor',
    );
    const text = lines.join('');
    expect(text).toContain('second factor');
    for (const value of ['492039', 'Vq2mfaTokenValue', 'JBSWY3DPEHPK3PXP', 'k3m9x', '118302', 'Other-mfa-token', '777111', 'Third-mfa-token']) {
      expect(text, value).not.toContain(value);
    }
  });
});
