import { Type } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import type { AppContext } from '../../auth/context.js';
import { isMigrated } from '../../db/migrate.js';
import { AppError } from '../../errors.js';
import { TAG } from '../plugins/docs-tags.js';
import { ErrorBodies } from './schemas.js';

const Status = Type.Object({ status: Type.String() });

const Jwks = Type.Object({
  keys: Type.Array(Type.Object({ kid: Type.String(), alg: Type.String(), kty: Type.String(), use: Type.String() }, { additionalProperties: true })),
});

/** Health, readiness and the published verification keys. */
export function registerOperationRoutes(app: FastifyInstance, deps: Readiness): void {
  registerHealthRoutes(app, deps);
  app.get(
    '/.well-known/jwks.json',
    { schema: { summary: 'Public keys that verify access tokens', tags: [TAG.keys], response: { 200: Jwks } } },
    async (_request, reply) => {
      // Short caching: well under the time a new key waits before it signs (KEY_ACTIVATION_DELAY, 60 s).
      return reply.header('cache-control', 'public, max-age=30').send(await deps.keys.jwks());
    },
  );
}

type Readiness = Pick<AppContext, 'database' | 'keys' | 'sealedSecrets'>;

/**
 * Liveness and readiness: on the public port for load balancers, and on the management listener.
 * Ready: the database answers (on SQLite whose disk was found full, a write succeeds again:
 * sqlite-ping.ts) and is migrated, and this instance opens its sealed secrets (the signing key
 * is loaded, as for signing, through the key cache; a TOTP secret is only met when an admin uses
 * it, and then reported to `sealedSecrets`).
 */
export function registerHealthRoutes(app: FastifyInstance, deps: Readiness): void {
  app.get('/healthz', { schema: { summary: 'The process is up', tags: [TAG.operations], response: { 200: Status } } }, () => ({ status: 'ok' }));

  app.get(
    '/readyz',
    {
      schema: {
        summary: 'The database is reachable and migrated, and this instance opens its sealed secrets',
        tags: [TAG.operations],
        response: { 200: Status, 503: ErrorBodies.unavailable },
      },
    },
    async () => {
      const ready = await deps.database
        .ping()
        .then(() => isMigrated(deps.database))
        .catch((error: unknown) => {
          throw new AppError('UNAVAILABLE', { cause: error });
        });
      if (!ready) throw new AppError('UNAVAILABLE', { cause: new Error('database schema is not migrated') });
      const unopened = deps.sealedSecrets.unopened;
      if (unopened !== undefined) throw new AppError('UNAVAILABLE', { cause: new Error(unopened) });
      await deps.keys.signer();
      return { status: 'ready' };
    },
  );
}
