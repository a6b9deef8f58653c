import { describe, expect, it } from 'vitest';
import { isSecretName } from '../../../src/http/body/secret-names.js';

describe('isSecretName: the one rule of what a 422 never echoes', () => {
  it('names a secret in any spelling a confused client might use', () => {
    const secrets = [
      'password', 'refresh_token', 'recovery_code', 'recovery_codes', 'otp', 'secret', 'code', 'current_password', 'new_password',
      'mfa_token', 'client_secret', 'code_verifier', 'clientSecret', 'codeVerifier', 'newPassword', 'new-password', 'PASSWORD',
      'password2', 'access_token', 'id_token', 'api_key', 'privateKey', 'totp_code', 'pin', 'passphrase', 'Authorization', 'signature',
    ];
    for (const name of secrets) expect(isSecretName(name), name).toBe(true);
  });

  it('leaves the identifiers a client needs to see to fix its request', () => {
    for (const name of ['school_id', 'username', 'factor_id', 'session_id', 'method', 'name', 'since', 'id', 'type', 'rawId', 'transports', 'decode', 'passage', 'keyboard']) {
      expect(isSecretName(name), name).toBe(false);
    }
  });
});
