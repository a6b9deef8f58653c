import type { MfaFactor } from '../db/queries/mfa-factors.js';
import { isoSeconds, printRows } from './output.js';
import { count } from './plural.js';
import { say } from './run.js';
import { escapeForTerminal } from './terminal-text.js';

/** What `admin mfa list` and `admin passwd` show of an admin's second factor. */
interface FactorReport {
  readonly admin: { readonly school_id: string; readonly username: string };
  readonly factors: readonly MfaFactor[];
  readonly recoveryCodesLeft: number;
  readonly locked: boolean;
}

/** One row per factor: never a secret; when and from which address it was enrolled. */
export function factorRows(factors: readonly MfaFactor[]) {
  return factors.map((factor) => ({
    factor_id: factor.id,
    type: factor.type,
    name: factor.name,
    created_at: isoSeconds(factor.created_at),
    enrolled_ip: factor.enrolled_ip,
    last_used_at: isoSeconds(factor.last_used_at),
  }));
}

/** An argument as the operator can paste it into a POSIX shell. */
function shellWord(text: string): string {
  return /^[\w.@+-]+$/u.test(text) ? text : `'${text.replaceAll("'", `'\\''`)}'`;
}

/** The command that removes every factor of the admin, ready to paste. */
function resetCommand(admin: FactorReport['admin']): string {
  return escapeForTerminal(`school-auth admin mfa reset --school ${shellWord(admin.school_id)} --username ${shellWord(admin.username)}`);
}

/**
 * The factor table for people, with the incident rule beside it: after a leaked password, a
 * factor the admin did not enroll themselves (a time after the leak, an address they do not
 * know) is the attacker's way back in, and only a reset removes it.
 */
export function printFactorReport(report: FactorReport): void {
  printRows(factorRows(report.factors), false, 'no second factor');
  say(`${count(report.recoveryCodesLeft, 'recovery code')} left${report.locked ? '; locked' : ''}`);
  if (report.factors.length === 0) return;
  say(
    'if the admin did not enroll every factor above themselves (enrolled after the password may have leaked, or from an address ' +
      `they do not know), remove them all, then have the admin enroll again: ${resetCommand(report.admin)}`,
  );
}
