import cors from '@fastify/cors';
import type { FastifyInstance } from 'fastify';

/**
 * Exactly what the routes use (test/http/plugins/cors.test.ts compares with the OpenAPI document, so a
 * route with a new method fails it): DELETE signs out a lost device or removes a factor.
 */
const METHODS = ['GET', 'POST', 'DELETE'];
/** Bearer tokens travel in Authorization, never in cookies: credentials stay disallowed. */
const REQUEST_HEADERS = ['content-type', 'authorization', 'x-request-id', 'if-none-match'];
const EXPOSED_HEADERS = ['x-request-id', 'retry-after', 'www-authenticate', 'etag'];

/** Only the configured origins may call us from a browser; none by default. */
export async function registerCors(app: FastifyInstance, origins: readonly string[]): Promise<void> {
  if (origins.length === 0) return;
  await app.register(cors, {
    origin: [...origins],
    methods: METHODS,
    allowedHeaders: REQUEST_HEADERS,
    exposedHeaders: EXPOSED_HEADERS,
    maxAge: 600,
  });
}
