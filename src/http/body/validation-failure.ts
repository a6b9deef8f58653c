import { jsonInvalidBody, jsonInvalidItem, type ValidationItem } from './fastapi-validation.js';

/**
 * A request body that fails validation: answered 422 with FastAPI's `detail` items by the error
 * handler. Malformed bodies are expected input, not bugs: it is never logged, so it has no stack.
 *
 * Fastify answers through the error handler only what is `instanceof Error`, hence the prototype
 * chain below; it is not built by Error's constructor, because capturing a stack is the largest
 * cost of a 422, the cheapest answer any client can provoke (bench/README.md, the ledger).
 */
export class ValidationFailure {
  readonly name = 'ValidationFailure';
  readonly message = 'request validation failed';
  readonly statusCode = 422;
  /** The answer's body, `{"detail": items}` as JSON. */
  readonly body: string;

  /** `body`, when given, must be exactly what JSON.stringify writes for `{ detail: items }`. */
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
