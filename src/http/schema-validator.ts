import type { FastifySchemaCompiler } from 'fastify';
import { validateBody, type FieldSpec } from './body/fastapi-validation.js';
import { ValidationFailure } from './validation-failure.js';

interface ObjectSchema {
  properties?: Record<string, { maxLength?: number }>;
}

/** The string fields of a body schema, in declaration order, with their length limits. */
export function fieldsOf(schema: ObjectSchema): FieldSpec[] {
  return Object.entries(schema.properties ?? {}).map(([name, property]) => ({
    name,
    maxLength: property.maxLength ?? Number.MAX_SAFE_INTEGER,
  }));
}

/**
 * Route body schemas are validated the way Pydantic v2 does it, so the 422 items match FastAPI's
 * exactly; the schemas themselves stay the single description of each body (and of the OpenAPI).
 */
export const fastapiValidatorCompiler: FastifySchemaCompiler<ObjectSchema> = ({ schema, httpPart }) => {
  if (httpPart !== 'body') return (data: unknown) => ({ value: data });
  const fields = fieldsOf(schema);
  return (data: unknown) => {
    const items = validateBody(data, fields);
    return items.length === 0 ? { value: data } : { error: new ValidationFailure(items) };
  };
};
