import type { FastifySchemaCompiler } from 'fastify';
import { AppError } from '../../errors.js';
import { JsonText } from './decode.js';
import { validateBody, type FieldSpec } from './fastapi-validation.js';
import { parseJsonLikePython } from './python-json.js';
import { ValidationFailure } from './validation-failure.js';

interface ObjectSchema {
  properties?: Record<string, { maxLength?: number; type?: string }>;
  required?: readonly string[];
}

/** The fields of a body schema, in declaration order, with their kinds and length limits. */
export function fieldsOf(schema: ObjectSchema): FieldSpec[] {
  const required = new Set(schema.required ?? []);
  return Object.entries(schema.properties ?? {}).map(([name, property]) => ({
    name,
    maxLength: property.maxLength ?? Number.MAX_SAFE_INTEGER,
    kind: property.type === 'object' ? 'object' : 'string',
    optional: !required.has(name),
  }));
}

type Outcome = { value: unknown } | { error: Error };

/** Parses a JSON body the way Python's json module does, so its errors read the same. */
function parseBody(body: unknown): Outcome {
  if (!(body instanceof JsonText)) return { value: body };
  const parsed = parseJsonLikePython(body.text);
  if (parsed.kind === 'too_deep') return { error: new AppError('BODY_UNPARSABLE') };
  if (parsed.kind === 'invalid') return { error: ValidationFailure.jsonInvalid(parsed.position, parsed.message) };
  return { value: parsed.value };
}

/**
 * Route body schemas are validated the way Pydantic v2 does it, so the 422 items match FastAPI's
 * exactly; the schemas themselves stay the single description of each body (and of the OpenAPI).
 */
export const fastapiValidatorCompiler: FastifySchemaCompiler<ObjectSchema> = ({ schema, httpPart }) => {
  if (httpPart !== 'body') return (data: unknown) => ({ value: data });
  const fields = fieldsOf(schema);
  const validate = (data: unknown): Outcome => {
    const parsed = parseBody(data);
    if ('error' in parsed) return parsed;
    const items = validateBody(parsed.value, fields);
    return items.length === 0 ? parsed : { error: new ValidationFailure(items) };
  };
  return validate;
};
