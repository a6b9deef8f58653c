import type { KeyObject } from 'node:crypto';
import { SigningThread } from './signing-thread.js';

/** A private key ready to sign compact JWS: the header is encoded once, not per token. */
export interface JwsSigner {
  readonly kid: string;
  readonly alg: string;
  readonly privateKey: KeyObject;
  readonly encodedHeader: string;
}

export function createJwsSigner(kid: string, alg: string, privateKey: KeyObject, typ: string): JwsSigner {
  const encodedHeader = Buffer.from(JSON.stringify({ alg, typ, kid })).toString('base64url');
  return { kid, alg, privateKey, encodedHeader };
}

/** Every process signs on one thread of its own, started at the first signature. */
const signingThread = new SigningThread();

/**
 * Signs a JWT with node:crypto on the signing thread (signing-thread.ts), so the signature (the
 * largest cost of a refresh) runs beside the event loop instead of on it. jose's signing goes
 * through WebCrypto, whose argument handling costs more than the signature itself here.
 * Verification, where the security checks are, stays with jose (see access-token.ts), and the
 * tests verify what this produces with jose.
 */
export function signJwt(signer: JwsSigner, claims: Record<string, unknown>): Promise<string> {
  return signingThread.sign(signer.privateKey, digestOf(signer.alg), signingInputOf(signer, claims));
}

function signingInputOf(signer: JwsSigner, claims: Record<string, unknown>): string {
  return `${signer.encodedHeader}.${Buffer.from(JSON.stringify(claims)).toString('base64url')}`;
}

function digestOf(alg: string): string | null {
  if (alg === 'ES256' || alg === 'RS256') return 'sha256';
  if (alg === 'EdDSA') return null;
  throw new TypeError(`unsupported signing algorithm ${alg}`);
}
