import type { FastifyReply, FastifyRequest } from 'fastify';

/** The largest declared body read and discarded after a 413: deploy/nginx.conf's client_max_body_size. */
const DRAIN_LIMIT_BYTES = 1024 * 1024;

/**
 * Fastify answers 413 from the Content-Length alone and asks for the connection to be closed.
 * Closing a socket whose unread body is still arriving resets it, and a proxy that has not read
 * the answer yet then reports 502 instead of our 413. So for a declared body of up to
 * DRAIN_LIMIT_BYTES the connection stays open: Node reads and discards the body after the answer
 * and the connection serves the next request. A larger declared body, or a chunked one of unknown
 * size, is not worth reading: its connection closes as before.
 */
export function keepOpenToDrain(request: FastifyRequest, reply: FastifyReply): void {
  const declared = Number(request.headers['content-length']);
  if (!Number.isSafeInteger(declared) || declared > DRAIN_LIMIT_BYTES) return;
  reply.removeHeader('connection');
}
