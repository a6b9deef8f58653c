import type { FastifyInstance, FastifyRequest } from 'fastify';
import { AppError } from '../errors.js';
import { RawBody, jsonInvalidItem } from './body/fastapi-validation.js';
import { parseJsonLikePython } from './body/python-json.js';
import { ValidationFailure } from './validation-failure.js';

const utf8 = new TextDecoder('utf-8', { fatal: true });

/** `application/json` or `application/*+json`, any case, any parameters (as FastAPI decides). */
export function isJsonMediaType(contentType: string | undefined): boolean {
  if (contentType === undefined) return false;
  const essence = (contentType.split(';', 1)[0] ?? '').trim().toLowerCase();
  if (essence === 'application/json') return true;
  return essence.startsWith('application/') && essence.endsWith('+json');
}

/**
 * Turns the raw bytes into what validation sees: undefined for an empty body, the JSON value when
 * the media type is JSON, otherwise a RawBody (validated as a string and never echoed, since it
 * may hold a password).
 */
export function decodeBody(request: Pick<FastifyRequest, 'headers'>, bytes: Buffer): unknown {
  if (bytes.length === 0) return undefined;
  let text: string;
  try {
    // A leading BOM is dropped, as Python does for UTF-8 bytes.
    text = utf8.decode(bytes);
  } catch (error) {
    throw new AppError('BODY_UNPARSABLE', { cause: error });
  }
  if (!isJsonMediaType(request.headers['content-type'])) return new RawBody(text);
  const parsed = parseJsonLikePython(text);
  if (parsed.kind === 'too_deep') throw new AppError('BODY_UNPARSABLE');
  if (parsed.kind === 'invalid') throw new ValidationFailure([jsonInvalidItem(parsed.position, parsed.message)]);
  return parsed.value;
}

/**
 * Every media type reaches the same parser: validation, not the parser, decides what is wrong
 * with a body, so a wrong Content-Type gets the documented 422 rather than a 415.
 */
export function registerBodyParser(app: FastifyInstance): void {
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('*', { parseAs: 'buffer' }, (request, body, done) => {
    try {
      done(null, decodeBody(request, body as Buffer));
    } catch (error) {
      done(error as Error, undefined);
    }
  });
}
