/** The first thing `events verify` found wrong with the audit trail: the message names it. */
export class AuditProblem extends Error {
  override readonly name = 'AuditProblem';
}

/** A time as verify's messages name it (epoch ms to ISO 8601). */
export const isoTime = (ms: number): string => new Date(ms).toISOString();
