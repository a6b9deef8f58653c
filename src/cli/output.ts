import { escapeForTerminal, terminalSafeJson } from './terminal-text.js';

/**
 * Prints rows as JSON (--json, exact values) or as an aligned text table for people, in which
 * every cell is escaped: a value from a client can neither forge a row nor drive the terminal.
 */
export function printRows(rows: readonly Record<string, unknown>[], json: boolean, empty: string): void {
  if (json) {
    process.stdout.write(`${terminalSafeJson(rows)}\n`);
    return;
  }
  const first = rows[0];
  if (first === undefined) {
    process.stdout.write(`${empty}\n`);
    return;
  }
  const columns = Object.keys(first);
  const cells = rows.map((row) => columns.map((column) => formatCell(row[column])));
  const widths = columns.map((column, index) => Math.max(column.length, ...cells.map((line) => line[index]?.length ?? 0)));
  const format = (line: string[]) => line.map((cell, index) => cell.padEnd(widths[index] ?? 0)).join('  ').trimEnd();
  process.stdout.write(`${[format(columns), ...cells.map(format)].join('\n')}\n`);
}

function formatCell(value: unknown): string {
  if (value === null || value === undefined) return '-';
  return escapeForTerminal(typeof value === 'string' ? value : JSON.stringify(value));
}

/** Epoch seconds as an ISO time, for tables and JSON alike. */
export function isoSeconds(seconds: number | null): string | null {
  return seconds === null ? null : new Date(seconds * 1000).toISOString();
}
