import { CompiledQuery, type QueryResult, type RawBuilder } from 'kysely';
import { dialectOf, type Db, type Dialect } from './database.js';

/** A statement that runs with its SQL text compiled once per dialect. */
type Precompiled<A extends readonly unknown[], R> = (db: Db, ...args: A) => Promise<QueryResult<R>>;

/**
 * Kysely compiles a `sql` template anew on every execution (its node tree visited and joined into
 * text). For the few statements on the hot paths, `precompiled` compiles `build` once per dialect,
 * with placeholders for its arguments, and then runs the same text with each call's arguments
 * through Kysely's executor, so drivers, statement caches and transactions see what they always
 * see. Invariant, checked at the first compilation: `build` places each of its declared
 * parameters exactly once, in order, as a parameter (never spliced into the text), so arguments map to
 * parameters by position.
 */
export function precompiled<A extends readonly unknown[], R>(build: (...args: A) => RawBuilder<R>): Precompiled<A, R> {
  const texts = new Map<Dialect, string>();
  return async (db, ...args) => {
    const dialect = dialectOf(db);
    let text = texts.get(dialect);
    if (text === undefined) {
      text = compileWithPlaceholders(db, build);
      texts.set(dialect, text);
    }
    return db.executeQuery<R>(CompiledQuery.raw(text, [...args]));
  };
}

function compileWithPlaceholders<A extends readonly unknown[], R>(db: Db, build: (...args: A) => RawBuilder<R>): string {
  const arity = build.length;
  const placeholders = Array.from({ length: arity }, (_, i) => `\u0000precompiled-argument-${i}`);
  const compiled = build(...(placeholders as unknown as A)).compile(db);
  const inOrder = compiled.parameters.length === arity && compiled.parameters.every((parameter, i) => parameter === placeholders[i]);
  if (!inOrder) throw new Error(`a precompiled statement must use each of its ${arity} arguments once, in order: ${compiled.sql}`);
  return compiled.sql;
}
