import cors from '@fastify/cors';
import type { FastifyInstance } from 'fastify';

/** Only the configured origins may call us from a browser; none by default. */
export async function registerCors(app: FastifyInstance, origins: readonly string[]): Promise<void> {
  if (origins.length === 0) return;
  await app.register(cors, {
    origin: [...origins],
    methods: ['GET', 'POST'],
    allowedHeaders: ['content-type', 'authorization', 'x-request-id'],
    exposedHeaders: ['x-request-id', 'retry-after', 'www-authenticate'],
    maxAge: 600,
  });
}
