import type { Logger } from '../../runtime/logger.js';
import type { KeyEncryptionError } from './key-encryption.js';

/**
 * Whether this instance has met a sealed secret it cannot open: a signing key or a TOTP secret
 * that `keys encrypt` sealed under a key file this instance was not started with (or another
 * one). Only a restart changes an instance's configuration, so once met the instance stays not
 * ready until then: requests that need the secret answer 503 (a load balancer retries elsewhere)
 * and /readyz answers 503, rather than each request failing with a 500.
 */
export class SealedSecretWatch {
  private problem: string | undefined;

  /** What could not be opened (names the key or factor, never the secret), once met. */
  get unopened(): string | undefined {
    return this.problem;
  }

  /** Records the problem; the first one is logged, once per instance, with the fix. */
  report(error: KeyEncryptionError, log: Logger): void {
    if (this.problem !== undefined) return;
    this.problem = error.message;
    log.error(
      { problem: error.message },
      'a sealed secret cannot be opened: set KEY_ENCRYPTION_KEY_FILE to the key file that `keys encrypt` used and restart this instance; until then it answers 503 and is not ready',
    );
  }
}
