/**
 * An error a SCIM client sees in SCIM's own error schema (RFC 7644 §3.12): the HTTP status, the
 * `scimType` where the RFC names one, and a detail written for the directory's administrator.
 */
export type ScimType =
  | 'invalidFilter'
  | 'tooMany'
  | 'uniqueness'
  | 'mutability'
  | 'invalidSyntax'
  | 'invalidPath'
  | 'noTarget'
  | 'invalidValue'
  | 'invalidVers'
  | 'sensitive';

export class ScimError extends Error {
  constructor(
    readonly status: number,
    readonly scimType: ScimType | undefined,
    detail: string,
  ) {
    super(detail);
    this.name = 'ScimError';
  }
}

export const badRequest = (scimType: ScimType, detail: string): ScimError => new ScimError(400, scimType, detail);

export const ERROR_SCHEMA = 'urn:ietf:params:scim:api:messages:2.0:Error';

/** The body of an error answer. */
export function scimErrorBody(error: ScimError): Record<string, unknown> {
  const body: Record<string, unknown> = { schemas: [ERROR_SCHEMA], status: String(error.status), detail: error.message };
  if (error.scimType !== undefined) body.scimType = error.scimType;
  return body;
}
