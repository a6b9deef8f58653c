import { createHash } from 'node:crypto';

/**
 * The personal fields of an audit event, sealed through a digest rather than as they are
 * (docs/audit-trail.md, "Erasure"): erasing them, with their salt, leaves the chain verifiable.
 */
export interface PersonalFields {
  readonly username: string | null;
  readonly ip: string | null;
  readonly user_agent: string | null;
  readonly detail: string | null;
}

/**
 * The salt is 32 random bytes in hex, one per event: without it the digest of a username or an
 * address could be guessed. hex(SHA-256(salt in hex || canonical JSON of the four fields)), the JSON with keys in code-point
 * order and no whitespace, as the events' canonical form is written.
 */
export function personalDigest(salt: string, fields: PersonalFields): string {
  const json = `{"detail":${JSON.stringify(fields.detail)},"ip":${JSON.stringify(fields.ip)},"user_agent":${JSON.stringify(fields.user_agent)},"username":${JSON.stringify(fields.username)}}`;
  return createHash('sha256').update(salt).update(json).digest('hex');
}
