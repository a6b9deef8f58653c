import type { FastifyInstance, FastifySchema, FastifySchemaCompiler } from 'fastify';
import { AppError } from '../../errors.js';
import { JsonText } from './decode.js';
import { validateBody, type FieldSpec } from './fastapi-validation.js';
import { parseJsonLikePython } from './python-json.js';
import { holdsUnstorableText, unstorableItems } from './unstorable-text.js';
import { ValidationFailure } from './validation-failure.js';
import '../route-config.js';

interface ObjectSchema {
  type?: string;
  properties?: Record<string, { maxLength?: number; type?: string }>;
  required?: readonly string[];
  anyOf?: readonly ObjectSchema[];
}

/**
 * A body schema: an object schema, or (FastAPI's `body: Model | None = None`) an object schema
 * or null, which makes the body optional: none at all, or `null`, passes as undefined.
 */
function bodyShape(schema: ObjectSchema): { fields: FieldSpec[]; optional: boolean } {
  if (schema.anyOf === undefined) return { fields: fieldsOf(schema), optional: false };
  const object = schema.anyOf.find((member) => member.type === 'object') ?? {};
  return { fields: fieldsOf(object), optional: schema.anyOf.some((member) => member.type === 'null') };
}

/** The fields of a body schema, in declaration order, with their kinds and length limits. */
function fieldsOf(schema: ObjectSchema): FieldSpec[] {
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
 * Text no database holds is a 422 unless `passUnstorableText`.
 */
function validatorCompiler(passUnstorableText: boolean): FastifySchemaCompiler<FastifySchema> {
  return ({ schema, httpPart }) => {
    if (httpPart === 'params') return validateParams;
    if (httpPart === 'querystring') return validateQuery;
    if (httpPart !== 'body') return (data: unknown) => ({ value: data });
    // Every route's body schema is an object schema, or one that may be left out (src/http/routes/).
    const { fields, optional } = bodyShape(schema as ObjectSchema);
    const validate = (data: unknown): Outcome => {
      const parsed = parseBody(data);
      if ('error' in parsed) return parsed;
      if (optional && (parsed.value === undefined || parsed.value === null)) return { value: undefined };
      const items = validateBody(parsed.value, fields);
      if (items.length === 0 && !passUnstorableText) items.push(...unstorableItems(parsed.value, 'body'));
      return items.length === 0 ? parsed : { error: new ValidationFailure(items) };
    };
    return validate;
  };
}

/**
 * Validates every route registered after this. The bodies of the original contract
 * (`config.contractBody`) have fixed answers: a name with NUL is an unknown account (401) and a
 * token with NUL an invalid one, as they always were, so their strings pass as they are; login
 * looks names up only when storable, tokens are only ever hashed. A compiler is given the schema,
 * method and URL but not the route's config, so those routes get their own compiler here.
 */
export function registerValidator(app: FastifyInstance): void {
  app.setValidatorCompiler(validatorCompiler(false));
  const contractCompiler = validatorCompiler(true);
  app.addHook('onRoute', (route) => {
    if (route.config?.contractBody === true) route.validatorCompiler = contractCompiler;
  });
}

/** A path parameter with text no database holds names nothing: 404, as an unknown id. */
function validateParams(data: unknown): Outcome {
  return holdsUnstorableText(data) ? { error: new AppError('NOT_FOUND') } : { value: data };
}

/** A query parameter with text no database holds: one 422 item each, as FastAPI locates them. */
function validateQuery(data: unknown): Outcome {
  const items = unstorableItems(data, 'query');
  return items.length === 0 ? { value: data } : { error: new ValidationFailure(items) };
}
