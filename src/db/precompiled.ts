import { CompiledQuery, type QueryResult, type RawBuilder } from 'kysely';
import { dialectOf, type Db, type Dialect } from './database.js';

/** A statement's arguments, by name. */
type Arguments = object;

/** A statement that runs with its SQL text compiled once per dialect. */
type Precompiled<A extends Arguments, R> = (db: Db, args: A) => Promise<QueryResult<R>>;

/** A compiled text, and the name of the argument each of its parameters takes, in order. */
interface Compiled {
  readonly text: string;
  readonly names: readonly string[];
}

const MARK = '\u0000precompiled-argument:';

/**
 * Kysely compiles a `sql` template anew on every execution (its node tree visited and joined into
 * text). For the few statements on the hot paths (bench/README.md, the ledger), `precompiled`
 * compiles `build` once per dialect, with a mark in place of each named argument, and then runs the
 * same text with each call's arguments through Kysely's executor, so drivers, statement caches and
 * transactions see what they always see. Invariant, checked at the first compilation: every
 * parameter of the text is one of the arguments and none is spliced into the text itself, so each
 * call's values map to parameters by name; a name may be placed any number of times.
 */
export function precompiled<A extends Arguments, R>(build: (args: A) => RawBuilder<R>): Precompiled<A, R> {
  const texts = new Map<Dialect, Compiled>();
  return async (db, args) => {
    const dialect = dialectOf(db);
    let compiled = texts.get(dialect);
    if (compiled === undefined) {
      compiled = compileWithMarks(db, build);
      texts.set(dialect, compiled);
    }
    return db.executeQuery<R>(CompiledQuery.raw(compiled.text, compiled.names.map((name) => (args as Record<string, unknown>)[name])));
  };
}

function compileWithMarks<A extends Arguments, R>(db: Db, build: (args: A) => RawBuilder<R>): Compiled {
  const marks = new Proxy({}, { get: (_target, name) => (typeof name === 'string' ? `${MARK}${name}` : undefined) }) as A;
  const compiled = build(marks).compile(db);
  const names = compiled.parameters.map((parameter) => (typeof parameter === 'string' && parameter.startsWith(MARK) ? parameter.slice(MARK.length) : undefined));
  if (compiled.sql.includes(MARK) || names.includes(undefined)) {
    throw new Error(`a precompiled statement must place its arguments as parameters, and nothing else: ${compiled.sql}`);
  }
  return { text: compiled.sql, names: names as string[] };
}
