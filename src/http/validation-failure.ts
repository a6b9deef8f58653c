import { jsonInvalidBody, jsonInvalidItem, type ValidationItem } from './body/fastapi-validation.js';

/**
 * A request body that fails validation: answered 422 with FastAPI's `detail` items.
 *
 * Fastify takes it for an Error (its prototype chain holds Error.prototype, see below), but it is
 * not built by Error's constructor: a malformed body is expected input, its failure is never
 * logged with a stack, and V8's Error constructor cost about 0.35 µs per 422 even with
 * `Error.stackTraceLimit` at 0.
 */
export class ValidationFailure {
  readonly name = 'ValidationFailure';
  readonly message = 'request validation failed';
  readonly statusCode = 422;
  /** The answer's body, `{"detail": items}` as JSON. */
  readonly body: string;

  constructor(
    readonly items: ValidationItem[],
    body?: string,
  ) {
    this.body = body ?? JSON.stringify({ detail: items });
  }

  /** A body that is not valid JSON, at `position` (in code points), with Python's message. */
  static jsonInvalid(position: number, message: string): ValidationFailure {
    return new ValidationFailure([jsonInvalidItem(position, message)], jsonInvalidBody(position, message));
  }
}
Object.setPrototypeOf(ValidationFailure.prototype, Error.prototype);
