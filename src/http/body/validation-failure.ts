import { jsonInvalidItem, type ValidationItem } from './fastapi-validation.js';

/**
 * A request body that fails validation: answered 422 with FastAPI's `detail` items by the error
 * handler. Malformed bodies are expected input, not bugs: it is never logged.
 */
export class ValidationFailure extends Error {
  readonly statusCode = 422;
  /** The answer's body, `{"detail": items}` as JSON. */
  readonly body: string;

  constructor(readonly items: ValidationItem[]) {
    super('request validation failed');
    this.name = 'ValidationFailure';
    this.body = JSON.stringify({ detail: items });
  }

  /** A body that is not valid JSON, at `position` (in code points), with Python's message. */
  static jsonInvalid(position: number, message: string): ValidationFailure {
    return new ValidationFailure([jsonInvalidItem(position, message)]);
  }
}
