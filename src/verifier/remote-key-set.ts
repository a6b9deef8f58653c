import { createLocalJWKSet, errors, type JSONWebKeySet, type JWTVerifyGetKey } from 'jose';

/**
 * The longest a verifier uses one copy of the JWKS (ms), whatever it is told: a key withdrawn with
 * `school-auth keys revoke` stops verifying everywhere within this, even behind a cache that
 * sends no max-age. school-auth itself sends `max-age=30`.
 */
export const MAX_JWKS_AGE_MS = 60_000;

interface RemoteKeySetOptions {
  readonly url: URL;
  /** Milliseconds a copy is used at most; the response's max-age applies when shorter. */
  readonly maxAge: number;
  /** Milliseconds between two fetches caused by an unknown `kid`. */
  readonly cooldown: number;
  readonly now: () => number;
}

/** Seconds a response may still be used by its Cache-Control and Age headers; undefined without max-age. */
function freshnessOf(cacheControl: string | null, age: string | null): number | undefined {
  if (cacheControl === null) return undefined;
  const directives = cacheControl.split(',').map((directive) => directive.trim().toLowerCase());
  if (directives.includes('no-store') || directives.includes('no-cache')) return 0;
  const maxAge = directives.map((directive) => /^max-age="?(\d{1,10})"?$/.exec(directive)?.[1]).find((value) => value !== undefined);
  if (maxAge === undefined) return undefined;
  const elapsed = /^\d{1,10}$/.test(age ?? '') ? Number(age) : 0;
  return Math.max(0, Number(maxAge) - elapsed);
}

async function fetchKeySet(url: URL): Promise<{ jwks: JSONWebKeySet; freshness: number | undefined }> {
  const response = await fetch(url, {
    headers: { accept: 'application/jwk-set+json, application/json' },
    redirect: 'manual',
    signal: AbortSignal.timeout(5000),
  });
  if (response.status !== 200) throw new errors.JOSEError('Expected 200 OK from the JSON Web Key Set HTTP response');
  const jwks = (await response.json()) as JSONWebKeySet;
  return { jwks, freshness: freshnessOf(response.headers.get('cache-control'), response.headers.get('age')) };
}

/**
 * Like jose's createRemoteJWKSet (refetch on an unknown `kid`, at most once per cooldown; one
 * fetch shared by concurrent verifications), but a copy is used only as long as the response's
 * `Cache-Control: max-age` allows, and never longer than `maxAge`. When a fetch fails after the
 * copy expired, verification fails: an expired copy may still hold a withdrawn key.
 */
export function createRemoteKeySet(options: RemoteKeySetOptions): JWTVerifyGetKey {
  let copy: { keys: JWTVerifyGetKey; fetchedAt: number; expiresAt: number } | undefined;
  let pending: Promise<void> | undefined;
  const reload = (): Promise<void> => {
    pending ??= fetchKeySet(options.url)
      .then(({ jwks, freshness }) => {
        const fetchedAt = options.now();
        const lifetime = Math.min(options.maxAge, freshness === undefined ? Infinity : freshness * 1000);
        copy = { keys: createLocalJWKSet(jwks), fetchedAt, expiresAt: fetchedAt + lifetime };
      })
      .finally(() => {
        pending = undefined;
      });
    return pending;
  };
  const current = async () => {
    if (copy === undefined || options.now() >= copy.expiresAt) await reload();
    if (copy === undefined) throw new errors.JOSEError('no JSON Web Key Set');
    return copy;
  };
  return async (header, token) => {
    const { keys, fetchedAt } = await current();
    try {
      return await keys(header, token);
    } catch (error) {
      if (!(error instanceof errors.JWKSNoMatchingKey) || options.now() < fetchedAt + options.cooldown) throw error;
      await reload();
      return (await current()).keys(header, token);
    }
  };
}
