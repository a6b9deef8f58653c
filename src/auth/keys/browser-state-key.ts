import { createSecretKey, hkdfSync, type KeyObject } from 'node:crypto';
import { secureRandomBytes } from '../secure-random.js';
import { ensureServerSecret } from '../../db/queries/server-secrets.js';
import type { Config } from '../../config/config.js';
import type { Db } from '../../db/database.js';

/** The derivation label and stored secret's name of the first use (single sign-on's state): kept, so states in flight survive an upgrade. */
const LABEL = 'school-auth sso state';
const SECRET_NAME = 'sso_state_key';
const keys = new WeakMap<object, Promise<KeyObject>>();

/**
 * The key that seals what a browser carries for us between two requests (single sign-on's
 * `state`, a passkey sign-in's challenge), each use under its own label. Derived from the
 * key-encryption key when one is set; otherwise a random key stored in the database the first
 * time, so every instance opens what any other sealed. The server prepares it when it starts, so
 * no unauthenticated request ever writes it.
 */
export function browserStateKey(deps: { readonly db: Db; readonly config: Pick<Config, 'keyEncryption'> }): Promise<KeyObject> {
  let key = keys.get(deps.db);
  if (key === undefined) {
    key = deriveKey(deps);
    key.catch(() => keys.delete(deps.db));
    keys.set(deps.db, key);
  }
  return key;
}

async function deriveKey(deps: { readonly db: Db; readonly config: Pick<Config, 'keyEncryption'> }): Promise<KeyObject> {
  const encryption = deps.config.keyEncryption;
  if (encryption !== undefined) {
    return createSecretKey(Buffer.from(hkdfSync('sha256', encryption.key.export(), Buffer.alloc(0), LABEL, 32)));
  }
  const stored = await ensureServerSecret(deps.db, SECRET_NAME, secureRandomBytes(32).toString('base64url'));
  return createSecretKey(Buffer.from(stored, 'base64url'));
}
