import type { FastifyBaseLogger } from 'fastify';
import { pino, type DestinationStream } from 'pino';

export type Logger = FastifyBaseLogger;

/**
 * Structured JSON logs. Secrets never reach a log line: request bodies are not logged, and the
 * paths below are censored should anything ever attach them.
 */
export function createLogger(level: string, destination?: DestinationStream): Logger {
  return pino(
    {
      level,
      redact: {
        paths: [
          'req.headers.authorization',
          'req.headers.cookie',
          'headers.authorization',
          'password',
          'refresh_token',
          'access_token',
          '*.password',
          '*.refresh_token',
          '*.access_token',
        ],
        censor: '[redacted]',
      },
    },
    destination,
  );
}
