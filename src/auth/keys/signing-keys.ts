import { createPrivateKey, type JsonWebKey } from 'node:crypto';
import { calculateJwkThumbprint, exportJWK, generateKeyPair, importJWK, type JWK } from 'jose';
import type { Clock } from '../../runtime/clock.js';
import { nowSeconds } from '../../runtime/clock.js';
import type { Config, JwtAlg } from '../../config/config.js';
import type { Db } from '../../db/database.js';
import type { KeyEncryptionKey } from '../../config/key-encryption-key.js';
import { insertSigningKey, insertSigningKeyUnlessOneSigns, listSigningKeys, type SigningKeyRow } from '../../db/queries/signing-keys.js';
import { recordEvent, SERVER_CONTEXT } from '../events.js';
import { checkStoredKeysOpen, openPrivateJwk, sealPrivateJwk } from './key-encryption.js';
import { ACCESS_TOKEN_TYPE } from '../../verifier/access-token-type.js';
import { createJwsSigner, type JwsSigner } from './jws.js';
import { scheduleKeys, type ScheduledKey } from './key-schedule.js';

/** Verifiers may run a little behind our clock: keep retired keys published this much longer. */
const CLOCK_SKEW_SECONDS = 60;

interface LoadedKey {
  readonly kid: string;
  readonly alg: string;
  readonly key: Awaited<ReturnType<typeof importJWK>>;
}

interface KeySet {
  readonly loadedAt: number;
  readonly signer: JwsSigner;
  readonly published: ReadonlyMap<string, LoadedKey>;
  readonly jwks: { keys: JWK[] };
}

type KeyConfig = Pick<Config, 'jwtAlg' | 'accessTokenTtl' | 'keyActivationDelay' | 'keyCacheSeconds' | 'keyEncryption'>;

/**
 * Creates a key pair and stores it, encrypted under `encryption` when given; it signs from
 * `activeFrom` on. Refused when the stored keys do not all open with `encryption`: a shell with
 * another key file, or none, must not add a key the server cannot read or one left in plaintext.
 */
export async function createSigningKey(db: Db, alg: JwtAlg, now: number, activeFrom: number, encryption?: KeyEncryptionKey): Promise<SigningKeyRow> {
  checkStoredKeysOpen(await listSigningKeys(db), encryption);
  const row = await generateSigningKey(alg, now, activeFrom, encryption);
  await insertSigningKey(db, row);
  return row;
}

async function generateSigningKey(alg: JwtAlg, now: number, activeFrom: number, encryption: KeyEncryptionKey | undefined): Promise<SigningKeyRow> {
  const { privateKey, publicKey } = await generateKeyPair(alg, { extractable: true, modulusLength: 2048 });
  const publicJwk = await exportJWK(publicKey);
  const kid = await calculateJwkThumbprint(publicJwk);
  return {
    kid,
    alg,
    private_jwk: sealPrivateJwk(JSON.stringify(await exportJWK(privateKey)), kid, encryption),
    public_jwk: JSON.stringify({ ...publicJwk, kid, alg, use: 'sig' }),
    created_at: now,
    active_from: activeFrom,
    revoked_at: null,
  };
}

/** Where each stored key stands now (for `keys list`). */
export async function describeSigningKeys(db: Db, config: KeyConfig, clock: Clock): Promise<ScheduledKey[]> {
  // An instance may sign with a superseded key until its cache expires: that token too must verify.
  const lastTokenLifetime = config.accessTokenTtl + config.keyCacheSeconds + CLOCK_SKEW_SECONDS;
  return scheduleKeys(await listSigningKeys(db), nowSeconds(clock), lastTokenLifetime);
}

/**
 * The signing keys as every instance sees them: read from the shared database and cached for
 * KEY_CACHE_SECONDS, so a rotation reaches all instances within that bound.
 */
export class SigningKeys {
  private current: KeySet | undefined;
  private loading: Promise<KeySet> | undefined;

  constructor(
    private readonly db: Db,
    private readonly config: KeyConfig,
    private readonly clock: Clock,
  ) {}

  /**
   * Makes sure a key of the configured algorithm signs: creates one on first start. The server
   * refuses to start, naming KEY_ENCRYPTION_KEY_FILE, when a stored key does not open with it,
   * rather than failing each request that signs.
   */
  async ensureKey(): Promise<void> {
    const now = nowSeconds(this.clock);
    const scheduled = await describeSigningKeys(this.db, this.config, this.clock);
    checkStoredKeysOpen(scheduled.map(({ row }) => row), this.config.keyEncryption);
    const usable = scheduled.some(({ row, state }) => row.alg === this.config.jwtAlg && (state === 'active' || state === 'pending'));
    this.current = undefined;
    if (usable) return;
    const row = await generateSigningKey(this.config.jwtAlg, now, now, this.config.keyEncryption);
    // Another instance starting at the same moment may have stored one first: then it is used.
    if (!(await insertSigningKeyUnlessOneSigns(this.db, row, now))) return;
    await recordEvent(this.db, this.clock, SERVER_CONTEXT, {
      type: 'keys.created',
      detail: `new ${row.alg} key ${row.kid} signs now: no key of JWT_ALG ${row.alg} signed`,
    });
  }

  async signer(): Promise<JwsSigner> {
    return (await this.keySet()).signer;
  }

  async jwks(): Promise<{ keys: JWK[] }> {
    return (await this.keySet()).jwks;
  }

  /** A published key by id; undefined for an unknown or retired `kid`. */
  async verificationKey(kid: string): Promise<LoadedKey | undefined> {
    return (await this.keySet()).published.get(kid);
  }

  /** Forgets the cached keys: the next use reads them again (the audit sealer, finding its key withdrawn). */
  reload(): void {
    this.current = undefined;
  }

  private async keySet(): Promise<KeySet> {
    const fresh = this.current !== undefined && this.clock.now() - this.current.loadedAt < this.config.keyCacheSeconds * 1000;
    if (fresh && this.current !== undefined) return this.current;
    // One reload at a time; concurrent callers share it.
    this.loading ??= this.load().finally(() => {
      this.loading = undefined;
    });
    this.current = await this.loading;
    return this.current;
  }

  private async load(): Promise<KeySet> {
    const scheduled = await describeSigningKeys(this.db, this.config, this.clock);
    const active = scheduled.find(({ state }) => state === 'active');
    if (active === undefined) throw new Error('no active signing key: run `school-auth migrate` and start the service once');
    const published = new Map<string, LoadedKey>();
    const jwks: JWK[] = [];
    for (const { row, state } of scheduled) {
      // Only keys that may have signed a live token are published; a revoked key never is.
      if (state === 'retired' || state === 'revoked') continue;
      const publicJwk = JSON.parse(row.public_jwk) as JWK;
      jwks.push(publicJwk);
      published.set(row.kid, { kid: row.kid, alg: row.alg, key: await importJWK(publicJwk, row.alg) });
    }
    const privateJwk = openPrivateJwk(active.row.private_jwk, active.row.kid, this.config.keyEncryption);
    const privateKey = createPrivateKey({ key: JSON.parse(privateJwk) as JsonWebKey, format: 'jwk' });
    return {
      loadedAt: this.clock.now(),
      signer: createJwsSigner(active.row.kid, active.row.alg, privateKey, ACCESS_TOKEN_TYPE),
      published,
      jwks: { keys: jwks },
    };
  }
}
