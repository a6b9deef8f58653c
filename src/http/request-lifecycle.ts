import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { levels } from 'pino';

export type ResponseObserver = (request: FastifyRequest, reply: FastifyReply) => void;

/**
 * What every request goes through after its route: the request id header, closing connections
 * once shutdown begins, one log line, and the metrics of answers that matched no route (routes
 * observe their own, see metrics.ts). Kept to one hook per stage, since every hook is paid on
 * every request.
 */
export function registerRequestLifecycle(app: FastifyInstance, observeUnmatched: ResponseObserver | undefined): void {
  // Once shutdown begins, every answer closes its connection: keep-alive clients would otherwise
  // hold the server open until SHUTDOWN_TIMEOUT.
  let closing = false;
  app.addHook('preClose', (done) => {
    closing = true;
    done();
  });
  app.addHook('onSend', (request, reply, payload, done) => {
    void reply.header('x-request-id', request.id);
    if (closing) void reply.header('connection', 'close');
    done(null, payload);
  });
  // One log line per request, after the answer; bodies and headers are never logged.
  app.addHook('onResponse', (request, reply, done) => {
    if (logsAtInfo(request.log.level)) logRequest(request, reply);
    if (request.is404) observeUnmatched?.(request, reply);
    done();
  });
}

/** Whether a logger at `level` writes info lines: the line's fields are only gathered then. */
function logsAtInfo(level: string): boolean {
  return (levels.values[level] ?? Infinity) <= levels.values.info!;
}

function logRequest(request: FastifyRequest, reply: FastifyReply): void {
  request.log.info(
    {
      method: request.method,
      route: request.routeOptions.url ?? null,
      status: reply.statusCode,
      durationMs: Math.round(reply.elapsedTime * 100) / 100,
      ip: request.ip,
    },
    'request',
  );
}
