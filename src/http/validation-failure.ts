import type { ValidationItem } from './body/fastapi-validation.js';

/** A request body that fails validation: answered 422 with FastAPI's `detail` items. */
export class ValidationFailure extends Error {
  readonly statusCode = 422;
  constructor(readonly items: ValidationItem[]) {
    super('request validation failed');
    this.name = 'ValidationFailure';
  }
}
