import { jsonInvalidBody, jsonInvalidItem, type ValidationItem } from './body/fastapi-validation.js';

/** A request body that fails validation: answered 422 with FastAPI's `detail` items. */
export class ValidationFailure extends Error {
  readonly statusCode = 422;
  /** The answer's body, `{"detail": items}` as JSON. */
  readonly body: string;

  constructor(
    readonly items: ValidationItem[],
    body?: string,
  ) {
    super('request validation failed');
    this.name = 'ValidationFailure';
    this.body = body ?? JSON.stringify({ detail: items });
  }

  /** A body that is not valid JSON, at `position` (in code points), with Python's message. */
  static jsonInvalid(position: number, message: string): ValidationFailure {
    return new ValidationFailure([jsonInvalidItem(position, message)], jsonInvalidBody(position, message));
  }
}
