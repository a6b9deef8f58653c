import type { FastifySerializerCompiler } from 'fastify';
import fastJson from 'fast-json-stringify';

/**
 * Success bodies are written by fast-json-stringify from their response schema, so only the
 * declared fields ever leave (a stray field on a token response is dropped, not sent). Error
 * bodies (4xx, 5xx) are built only by the error handler, from the catalogue and the validation
 * items, and go out through JSON.stringify: the 422 item schema (`loc` holds strings or integers)
 * would make fast-json-stringify run an Ajv validation on every element to pick a branch, which
 * cost more than the rest of the 422's serialization.
 */
export const responseSerializerCompiler: FastifySerializerCompiler<object> = ({ schema, httpStatus }) => {
  if (httpStatus !== undefined && /^[45]/.test(httpStatus)) return (data: unknown) => JSON.stringify(data);
  return fastJson(schema);
};
