import type { FastifySerializerCompiler } from 'fastify';
import fastJson from 'fast-json-stringify';

/**
 * Success bodies are written by fast-json-stringify from their response schema, so only the
 * declared fields ever leave (a stray field on a token response is dropped, not sent). Error
 * bodies (4xx, 5xx) are built only by the error handler, from the catalogue, and go out as built
 * through JSON.stringify; a 422 never reaches a serializer, it arrives already written
 * (ValidationFailure.body).
 */
export const responseSerializerCompiler: FastifySerializerCompiler<object> = ({ schema, httpStatus }) => {
  if (httpStatus !== undefined && /^[45]/.test(httpStatus)) return (data: unknown) => JSON.stringify(data);
  return fastJson(schema);
};
