import type { FastifyBaseLogger } from 'fastify';
import { pino, type DestinationStream } from 'pino';

export type Logger = FastifyBaseLogger;

/**
 * Structured JSON logs. Secrets never reach a log line: request bodies are not logged, and the
 * paths below are censored should anything ever attach them. The paths are explicit: a wildcard
 * (`*.password`) makes pino run every top-level key of every line, and of every per-request child
 * logger's bindings, through the redactor, a cost paid on every request.
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
          'body.password',
          'body.refresh_token',
          'req.body.password',
          'req.body.refresh_token',
          // Second factors: the code, the mfa_token and a TOTP secret are credentials too.
          'code',
          'mfa_token',
          'secret',
          'recovery_codes',
          'body.code',
          'body.mfa_token',
          'req.body.code',
          'req.body.mfa_token',
          // Single sign-on: the login code and its verifier, the sealed state, ID tokens, the IdP client secret.
          'code_verifier',
          'state',
          'id_token',
          'client_secret',
          'body.code_verifier',
          'req.body.code_verifier',
        ],
        censor: '[redacted]',
      },
    },
    destination,
  );
}
