import * as oidc from 'openid-client';
import type { AppContext } from '../context.js';
import { DOCUMENT_LIMIT, boundedFetch } from './bounded-fetch.js';

type Deps = Pick<AppContext, 'db' | 'clock'>;

/** How long a discovery document is reused before it is fetched again. */
const DOCUMENT_TTL_MS = 3_600_000;
/**
 * How long the IdP counts as up after it last answered: a `start` later than this fetches the
 * discovery document again before sending the browser there, so an IdP that went down is said
 * (`temporarily_unavailable`) at most this long after its last answer, with at most one request
 * to the IdP a minute from unauthenticated starts.
 */
export const CONFIRMED_UP_MS = 60_000;

interface Discovered {
  readonly server: oidc.ServerMetadata;
  readonly fetchedAt: number;
  jwks: oidc.ExportedJWKSCache | undefined;
}

/** The IdP could not be reached or answered nonsense: not the user's fault, and never a 500. */
export class IdpUnavailableError extends Error {
  constructor(cause: unknown) {
    super('identity provider unavailable', { cause });
    this.name = 'IdpUnavailableError';
  }
}

const caches = new WeakMap<object, Map<string, Discovered>>();
const inFlight = new Map<string, Promise<Discovered>>();

function cacheOf(deps: Deps): Map<string, Discovered> {
  let cache = caches.get(deps.db);
  if (cache === undefined) caches.set(deps.db, (cache = new Map<string, Discovered>()));
  return cache;
}

/**
 * The IdP's discovery document, cached per database for an hour, or fetched now when it is older
 * than `maxAgeMs`. discovery() checks that the document's `issuer` is exactly the one asked for
 * (mix-up defence); the answer is read up to DOCUMENT_LIMIT bytes.
 */
export function discover(deps: Deps, issuer: string, options: { insecure: boolean; timeout: number; maxAgeMs?: number }): Promise<Discovered> {
  const cache = cacheOf(deps);
  const cached = cache.get(issuer);
  const maxAge = Math.min(options.maxAgeMs ?? DOCUMENT_TTL_MS, DOCUMENT_TTL_MS);
  if (cached !== undefined && deps.clock.now() - cached.fetchedAt < maxAge) return Promise.resolve(cached);
  // Starts that arrive while the document is being fetched wait for that one fetch.
  const key = `${issuer} ${String(options.insecure)}`;
  const pending = inFlight.get(key) ?? fetchDocument(deps, issuer, options, cached).finally(() => inFlight.delete(key));
  inFlight.set(key, pending);
  return pending;
}

async function fetchDocument(deps: Deps, issuer: string, options: { insecure: boolean; timeout: number }, cached: Discovered | undefined): Promise<Discovered> {
  const cache = cacheOf(deps);
  const execute = options.insecure ? [oidc.allowInsecureRequests] : [];
  const config = await oidc
    .discovery(new URL(issuer), 'discovery', undefined, oidc.None(), { execute, timeout: options.timeout, [oidc.customFetch]: boundedFetch(DOCUMENT_LIMIT) })
    .catch((error: unknown) => {
      cache.delete(issuer);
      throw new IdpUnavailableError(error);
    });
  // Keys already fetched stay: a refetched document does not mean the IdP rotated them.
  const discovered = { server: config.serverMetadata(), fetchedAt: deps.clock.now(), jwks: cached?.jwks };
  cache.set(issuer, discovered);
  return discovered;
}

/** Forgets a discovery that led to a failure, so the next sign-in fetches it again. */
export function forgetDiscovery(deps: Deps, issuer: string): void {
  caches.get(deps.db)?.delete(issuer);
}
