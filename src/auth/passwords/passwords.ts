import type { Algorithm } from '@node-rs/argon2';
import { secureRandomBytes } from '../secure-random.js';
import { phcParams, type Argon2Params } from './hash-params.js';
import { HashThreads } from './hash-threads.js';
import { normalizePassword } from '../identity.js';
import { WorkQueue } from './work-queue.js';

const MIN_PASSWORD_LENGTH = 12;
const MAX_PASSWORD_LENGTH = 1024;


/**
 * argon2id hashing on threads of its own (never on the event loop), behind a bounded queue.
 * Every hash is a PHC string carrying its own parameters, so old hashes keep verifying after the
 * configured parameters change, and are upgraded on the next successful login.
 */
export class PasswordHasher {
  readonly queue: WorkQueue;

  private constructor(
    private readonly params: Argon2Params,
    private readonly threads: HashThreads,
    private dummyHash: string,
    concurrency: number,
    queueLimit: number,
  ) {
    this.queue = new WorkQueue(concurrency, queueLimit);
  }

  /** Prepares the dummy hash up front, so the first unknown-account login is not slower. */
  static async create(params: Argon2Params, concurrency: number, queueLimit: number): Promise<PasswordHasher> {
    const threads = new HashThreads();
    const dummy = await threads.hash(secureRandomBytes(32).toString('base64'), argon2Options(params));
    return new PasswordHasher(params, threads, dummy, concurrency, queueLimit);
  }

  hash(password: string): Promise<string> {
    return this.queue.run(() => this.threads.hash(normalizePassword(password), argon2Options(this.params)));
  }

  /** Verifies; a malformed stored hash counts as a mismatch rather than an error. */
  verify(phc: string, password: string): Promise<boolean> {
    return this.queue.run(() => this.threads.verify(phc, normalizePassword(password)).catch(() => false));
  }

  /** Hashing threads running (at most the concurrency). */
  get threadCount(): number {
    return this.threads.size;
  }

  /** Stops the hashing threads; pending hashes are abandoned. */
  close(): Promise<void> {
    return this.threads.close();
  }

  /**
   * Makes the dummy hash with `params` (those most stored hashes have; see commonStoredHashParams)
   * rather than the configured ones, so that after raising the parameters an unknown account still
   * costs what an account that has not signed in since costs. Undefined keeps the current dummy.
   */
  async matchDummyTo(params: Argon2Params | undefined): Promise<void> {
    if (params === undefined) return;
    this.dummyHash = await this.threads.hash(secureRandomBytes(32).toString('base64'), argon2Options(params));
  }

  /**
   * Verifies against a hash of a random password, made with the parameters of most stored hashes
   * (the configured ones until matchDummyTo): the same work as a real verification, so an unknown
   * account costs the same time as a known one.
   */
  async verifyDummy(password: string): Promise<void> {
    await this.verify(this.dummyHash, password);
  }

  needsRehash(phc: string): boolean {
    const stored = phcParams(phc);
    if (stored === undefined) return true;
    return stored.memoryCost !== this.params.memoryCost || stored.timeCost !== this.params.timeCost || stored.parallelism !== this.params.parallelism;
  }
}

function argon2Options(params: Argon2Params) {
  // Algorithm is a const enum; 2 is its Argon2id member.
  return { algorithm: 2 as Algorithm, ...params };
}

/** Rules for a new password; returns the problem to show, or undefined when acceptable. */
export function checkNewPassword(password: string, identity: { username: string; schoolId: string }): string | undefined {
  // Both as typed (what the login endpoint's length limit counts) and as normalized (what is hashed).
  const lengths = [[...password].length, [...password.normalize('NFKC')].length];
  if (Math.min(...lengths) < MIN_PASSWORD_LENGTH) return `the password must be at least ${MIN_PASSWORD_LENGTH} characters long`;
  if (Math.max(...lengths) > MAX_PASSWORD_LENGTH) return `the password must be at most ${MAX_PASSWORD_LENGTH} characters long`;
  const folded = password.normalize('NFKC').toLowerCase();
  if (folded === identity.username.normalize('NFKC').toLowerCase()) return 'the password must not be the username';
  if (folded === identity.schoolId.normalize('NFKC').toLowerCase()) return 'the password must not be the school id';
  return undefined;
}
