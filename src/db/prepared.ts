import type { Compilable, CompiledQuery, QueryResult } from 'kysely';
import type { Db } from './database.js';

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
 * must pass each argument to Kysely as a plain value (it becomes a bound parameter).
 */
export function prepareQuery<Args extends readonly unknown[], Row>(
  build: (db: Db, ...args: Args) => Compilable<Row>,
): (db: Db, ...args: Args) => Promise<QueryResult<Row>> {
  const byAdapter = new WeakMap<object, Prepared>();
  return (db, ...args) => {
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
    return db.executeQuery<Row>({ ...compiled, parameters });
  };
}
