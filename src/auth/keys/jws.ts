import { sign, type KeyObject } from 'node:crypto';
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

/**
 * Signs on the calling thread, at once: for a signature that comes alone (a session's first token,
 * after its password hash or its IdP's answer), where waking the signing thread for it would cost
 * more than the signature itself. Same input, same key, same output as signJwt.
 */
export function signJwtHere(signer: JwsSigner, claims: Record<string, unknown>): string {
  const input = signingInputOf(signer, claims);
  // JWS wants the raw r||s form of an ECDSA signature, not DER (RFC 7518 §3.4), as in signing-worker.js.
  const signature = sign(digestOf(signer.alg), Buffer.from(input), { key: signer.privateKey, dsaEncoding: 'ieee-p1363' });
  return `${input}.${signature.toString('base64url')}`;
}

/**
 * A signature that comes alone: ES256 and EdDSA here at once, cheaper than waking the thread;
 * RS256, many times dearer, still on the signing thread, so that a login storm does not hold the
 * event loop (bench/README.md).
 */
export function signJwtAlone(signer: JwsSigner, claims: Record<string, unknown>): Promise<string> {
  if (signer.alg === 'RS256') return signJwt(signer, claims);
  return Promise.resolve(signJwtHere(signer, claims));
}

function signingInputOf(signer: JwsSigner, claims: Record<string, unknown>): string {
  return `${signer.encodedHeader}.${Buffer.from(JSON.stringify(claims)).toString('base64url')}`;
}

function digestOf(alg: string): string | null {
  if (alg === 'ES256' || alg === 'RS256') return 'sha256';
  if (alg === 'EdDSA') return null;
  throw new TypeError(`unsupported signing algorithm ${alg}`);
}
