import { sign, type KeyObject } from 'node:crypto';

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

/**
 * Signs a JWT with node:crypto, synchronously on the event loop. jose signs through WebCrypto,
 * which hops to the thread pool and back for every token: on the refresh path that costs about
 * twice the CPU, and it competes with password hashing for the same pool. Verification, where the
 * security checks are, stays with jose (see access-token.ts), and the tests verify what this
 * produces with jose.
 */
export function signJwt(signer: JwsSigner, claims: Record<string, unknown>): string {
  const signingInput = `${signer.encodedHeader}.${Buffer.from(JSON.stringify(claims)).toString('base64url')}`;
  const signature = sign(digestOf(signer.alg), Buffer.from(signingInput), {
    key: signer.privateKey,
    // JWS wants the raw r||s form of an ECDSA signature, not DER (RFC 7518 §3.4).
    dsaEncoding: 'ieee-p1363',
  });
  return `${signingInput}.${signature.toString('base64url')}`;
}

function digestOf(alg: string): string | null {
  if (alg === 'ES256' || alg === 'RS256') return 'sha256';
  if (alg === 'EdDSA') return null;
  throw new TypeError(`unsupported signing algorithm ${alg}`);
}
