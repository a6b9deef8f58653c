/** The first thing `events verify` found wrong with the audit trail: the message names it. */
export class AuditProblem extends Error {
  override readonly name = 'AuditProblem';
}
