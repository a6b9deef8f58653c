import { STATUS_CODES } from 'node:http';
import type { Socket } from 'node:net';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { catalogue } from '../errors.js';

/** Connection-level failures Node answers before any route runs, and what we answer instead. */
function statusFor(code: string | undefined): number {
  if (code === 'HPE_HEADER_OVERFLOW') return 431;
  if (code === 'ERR_HTTP_REQUEST_TIMEOUT') return 408;
  return 400;
}

/**
 * Answers malformed HTTP (bad framing, broken headers, oversized headers, a request that took too
 * long) with the same `{"detail": ...}` shape as every other error, then closes the connection.
 */
export function clientErrorHandler(error: Error & { code?: string }, socket: Socket): void {
  if (error.code === 'ECONNRESET' || !socket.writable) {
    socket.destroy();
    return;
  }
  const status = statusFor(error.code);
  const body = JSON.stringify({ detail: STATUS_CODES[status] ?? 'Bad Request' });
  socket.end(
    `HTTP/1.1 ${status} ${STATUS_CODES[status] ?? ''}\r\nContent-Type: application/json\r\n` +
      `Content-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
  );
}

/** A path with a broken %-escape matches no route: the same 404 as any unknown path (FastAPI's too). */
export function frameworkErrors(_error: Error, _request: FastifyRequest, reply: FastifyReply): void {
  void reply.code(404).send({ detail: catalogue.NOT_FOUND.detail });
}
