import type { FastifyInstance, FastifyRequest } from 'fastify';
import { AppError } from '../../errors.js';
import { RawBody } from './fastapi-validation.js';

const utf8 = new TextDecoder('utf-8', { fatal: true });

/** A body sent with a JSON media type, not parsed yet: validation parses it (see schema-validator). */
export class JsonText {
  constructor(readonly text: string) {}
}

/** `application/json` or `application/*+json`, any case, any parameters (as FastAPI decides). */
function isJsonMediaType(contentType: string | undefined): boolean {
  if (contentType === undefined) return false;
  if (contentType === 'application/json') return true;
  const essence = (contentType.split(';', 1)[0] ?? '').trim().toLowerCase();
  if (essence === 'application/json') return true;
  return essence.startsWith('application/') && essence.endsWith('+json');
}

/**
 * Turns the raw bytes into text: undefined for an empty body, JsonText when the media type is
 * JSON, otherwise a RawBody (validated as a string and never echoed, since it may hold a password).
 */
function decodeBody(request: Pick<FastifyRequest, 'headers'>, bytes: Buffer): undefined | JsonText | RawBody {
  if (bytes.length === 0) return undefined;
  let text: string;
  try {
    // A leading BOM is dropped, as Python does for UTF-8 bytes.
    text = utf8.decode(bytes);
  } catch (error) {
    throw new AppError('BODY_UNPARSABLE', { cause: error });
  }
  return isJsonMediaType(request.headers['content-type']) ? new JsonText(text) : new RawBody(text);
}

/**
 * Every media type reaches the same parser: validation, not the parser, decides what is wrong
 * with a body, so a wrong Content-Type gets the documented 422 rather than a 415. JSON is parsed
 * during validation, not here: a parser error would make Fastify close the connection, and an
 * unknown path must answer 404 whatever its body.
 */
export function registerBodyParser(app: FastifyInstance): void {
  app.removeAllContentTypeParsers();
  const parse = (request: FastifyRequest, body: Buffer, done: (error: Error | null, body?: unknown) => void): void => {
    if (request.is404) {
      done(null, undefined);
      return;
    }
    try {
      done(null, decodeBody(request, body));
    } catch (error) {
      done(error as Error, undefined);
    }
  };
  // Fastify caches the parser it finds for each Content-Type, but not the catch-all: registered
  // under its own name as well, the common case skips parsing its Content-Type on every request.
  app.addContentTypeParser('application/json', { parseAs: 'buffer' }, parse);
  app.addContentTypeParser('*', { parseAs: 'buffer' }, parse);
}
