import type { FastifyReply, FastifyRequest } from 'fastify';
import type { RequestContext } from '../auth/events.js';

/** The client IP is the socket peer, or what a trusted proxy says (Fastify's trustProxy). */
export function requestContext(request: FastifyRequest): RequestContext {
  return { ip: request.ip, userAgent: request.headers['user-agent'] ?? null };
}

/** Token responses must never be cached (RFC 6749 §5.1). */
export function noStore(reply: FastifyReply): FastifyReply {
  return reply.header('cache-control', 'no-store').header('pragma', 'no-cache');
}
