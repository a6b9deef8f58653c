import type SQLite from 'better-sqlite3';
import { damagedDatabase, isDamagedDatabase } from './sqlite-failures.js';

/**
 * Whether the file is a sound database, asked right after it is opened and before anything is
 * written to it, so that a damaged one is refused untouched (exit 6) rather than migrated or
 * served. `schema`: its header and schema can be read, which costs nothing, at every open.
 * `pages`: SQLite's quick_check also reads every page (about a second per 300 MB), for `serve`
 * and `migrate`, which write as they start.
 */
export function checkIntact(sqlite: SQLite.Database, depth: 'schema' | 'pages'): void {
  let problem: string | undefined;
  try {
    sqlite.prepare('select count(*) from sqlite_schema').get();
    if (depth === 'pages') problem = firstProblem(sqlite);
  } catch (error) {
    if (!isDamagedDatabase(error)) throw error;
    throw damagedDatabase(sqlite.name, (error as Error).message, error, true);
  }
  if (problem !== undefined) throw damagedDatabase(sqlite.name, problem, undefined, true);
}

/** quick_check's first finding in one line, or undefined when it answers `ok`. */
function firstProblem(sqlite: SQLite.Database): string | undefined {
  const [row] = sqlite.pragma('quick_check(1)') as { quick_check: string }[];
  const found = row?.quick_check ?? 'ok';
  if (found === 'ok') return undefined;
  const lines = found.split('\n').filter((line) => line.trim() !== '' && !line.startsWith('***'));
  return `quick_check: ${lines.join('; ')}`;
}
