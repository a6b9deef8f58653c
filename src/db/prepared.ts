import type { Compilable, CompiledQuery, QueryResult } from 'kysely';
import type { Db } from './database.js';
import { idleSqliteConnection, runNow } from './sqlite-direct.js';

/**
 * The SQL texts of the queries below, each with a statement name: on PostgreSQL they run as named
 * prepared statements (see postgres-statements.ts). The set is as small as the number of query
 * shapes in the code, since a shape is compiled once per dialect.
 */
const statementNames = new Map<string, string>();

/** The statement name of a query compiled by {@link prepareQuery}; undefined for any other. */
export function statementNameOf(sql: string): string | undefined {
  return statementNames.get(sql);
}

interface Prepared {
  readonly compiled: CompiledQuery;
  /** For each compiled parameter, the index of the argument that fills it, or -1 for a constant. */
  readonly slots: readonly number[];
}

/**
 * A query built and compiled by Kysely once per dialect, then run with new arguments: on the hot
 * paths (refresh, /me) building and compiling cost more than the indexed query itself. `build`
 * must pass each argument to Kysely as a plain value (it becomes a bound parameter). On an idle
 * SQLite connection the statement runs at once, without Kysely's executor (see sqlite-direct.ts).
 */
export function prepareQuery<Args extends readonly unknown[], Row>(build: (db: Db, ...args: Args) => Compilable<Row>): PreparedQuery<Args, Row> {
  const byAdapter = new WeakMap<object, Prepared>();
  const compile = (db: Db, ...args: Args): CompiledQuery<Row> => {
    const adapter = db.getExecutor().adapter;
    let prepared = byAdapter.get(adapter);
    if (prepared === undefined) {
      const markers = args.map((_, index) => `\u0000argument ${index}\u0000`);
      const compiled = build(db, ...(markers as unknown as Args)).compile();
      const slots = compiled.parameters.map((parameter) => markers.indexOf(parameter as string));
      if (new Set(slots.filter((slot) => slot >= 0)).size !== args.length) {
        throw new TypeError('prepareQuery: every argument must appear as a bound parameter');
      }
      prepared = { compiled, slots };
      if (!statementNames.has(compiled.sql)) statementNames.set(compiled.sql, `school_auth_${statementNames.size + 1}`);
      byAdapter.set(adapter, prepared);
    }
    const { compiled, slots } = prepared;
    const parameters = compiled.parameters.map((constant, index) => {
      const slot = slots[index] ?? -1;
      return slot >= 0 ? args[slot] : constant;
    });
    return { ...compiled, parameters };
  };
  const run = (db: Db, ...args: Args): Promise<QueryResult<Row>> => {
    const query = compile(db, ...args);
    const idle = idleSqliteConnection(db);
    if (idle === undefined) return db.executeQuery(query);
    // The promise constructor turns a throw (a constraint, a locked database) into a rejection.
    return new Promise((resolve) => resolve(runNow(idle, query)));
  };
  return Object.assign(run, { compile });
}

/** Runs the query (see prepareQuery); `compile` gives the statement to run inside sqliteTransaction. */
export interface PreparedQuery<Args extends readonly unknown[], Row> {
  (db: Db, ...args: Args): Promise<QueryResult<Row>>;
  compile(db: Db, ...args: Args): CompiledQuery<Row>;
}
