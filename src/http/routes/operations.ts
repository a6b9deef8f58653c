import { Type } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import type { Database } from '../../db/database.js';
import { isMigrated } from '../../db/migrate.js';
import type { SigningKeys } from '../../auth/keys/signing-keys.js';
import { AppError } from '../../errors.js';
import { TAG } from '../plugins/docs-tags.js';
import { ErrorBodies } from './schemas.js';

const Status = Type.Object({ status: Type.String() });

const Jwks = Type.Object({
  keys: Type.Array(Type.Object({ kid: Type.String(), alg: Type.String(), kty: Type.String(), use: Type.String() }, { additionalProperties: true })),
});

/** Health, readiness and the published verification keys. */
export function registerOperationRoutes(app: FastifyInstance, database: Database, keys: SigningKeys): void {
  registerHealthRoutes(app, database);
  app.get(
    '/.well-known/jwks.json',
    { schema: { summary: 'Public keys that verify access tokens', tags: [TAG.keys], response: { 200: Jwks } } },
    async (_request, reply) => {
      // Short caching: well under the time a new key waits before it signs (KEY_ACTIVATION_DELAY, 60 s).
      return reply.header('cache-control', 'public, max-age=30').send(await keys.jwks());
    },
  );
}

/** Liveness and readiness: on the public port for load balancers, and on the management listener. */
export function registerHealthRoutes(app: FastifyInstance, database: Database): void {
  app.get('/healthz', { schema: { summary: 'The process is up', tags: [TAG.operations], response: { 200: Status } } }, () => ({ status: 'ok' }));

  app.get(
    '/readyz',
    { schema: { summary: 'The database is reachable and migrated', tags: [TAG.operations], response: { 200: Status, 503: ErrorBodies.unavailable } } },
    async () => {
      const ready = await isMigrated(database).catch((error: unknown) => {
        throw new AppError('UNAVAILABLE', { cause: error });
      });
      if (!ready) throw new AppError('UNAVAILABLE', { cause: new Error('database schema is not migrated') });
      return { status: 'ready' };
    },
  );
}
