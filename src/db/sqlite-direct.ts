import type SQLite from 'better-sqlite3';
import type { CompiledQuery, QueryResult } from 'kysely';
import type { Db } from './database.js';

/**
 * The SQLite connection behind a Kysely instance, for running statements without Kysely's
 * executor. Kysely passes every query through a connection mutex and a chain of promises, which
 * on the refresh path cost more than the indexed statement itself. better-sqlite3 is synchronous:
 * while no transaction is open on the connection, a statement run now is exactly what Kysely would
 * run, since nothing else can use the connection before it returns.
 */
export interface SqliteConnection {
  readonly sqlite: SQLite.Database;
  /** better-sqlite3's prepared statement for a SQL text (cached: see connect.ts). */
  readonly prepare: (sql: string) => SQLite.Statement;
}

const connections = new WeakMap<Db, SqliteConnection>();

/** Called once by connectSqlite for the root Kysely instance (never for a transaction's). */
export function registerSqliteConnection(db: Db, connection: SqliteConnection): void {
  connections.set(db, connection);
}

/** The connection of a root SQLite instance, idle or not; undefined for anything else. */
export function rootSqliteConnection(db: Db): SqliteConnection | undefined {
  return connections.get(db);
}

/**
 * The connection of `db` when a statement may run on it at once: `db` is a root SQLite instance
 * and no transaction is open. Inside a Kysely transaction (which awaits between its statements)
 * this is undefined, and the caller goes through Kysely, which queues behind the transaction.
 */
export function idleSqliteConnection(db: Db): SqliteConnection | undefined {
  const connection = connections.get(db);
  if (connection === undefined || connection.sqlite.inTransaction || !connection.sqlite.open) return undefined;
  return connection;
}

export type RunNow = <Row>(query: CompiledQuery<Row>) => QueryResult<Row>;

/** Runs one compiled statement now, with the result Kysely's SQLite driver would give. */
export function runNow<Row>(connection: SqliteConnection, query: CompiledQuery<Row>): QueryResult<Row> {
  const statement = connection.prepare(query.sql);
  const parameters = query.parameters as unknown[];
  if (statement.reader) return { rows: readRows(statement, parameters) as Row[] };
  const { changes, lastInsertRowid } = statement.run(parameters);
  return { numAffectedRows: BigInt(changes), insertId: BigInt(lastInsertRowid), rows: [] };
}

const columnNames = new WeakMap<SQLite.Statement, readonly string[]>();

/**
 * The rows as objects, built here from better-sqlite3's raw arrays: its own objects set each
 * column by name from C++, interning the name again for every row, which cost more than the
 * indexed lookup of the refresh path. The statement is shared with Kysely: raw mode is undone.
 */
function readRows(statement: SQLite.Statement, parameters: unknown[]): Record<string, unknown>[] {
  let names = columnNames.get(statement);
  if (names === undefined) {
    names = statement.columns().map((column) => column.name);
    columnNames.set(statement, names);
  }
  let arrays: unknown[][];
  try {
    arrays = statement.raw(true).all(parameters) as unknown[][];
  } finally {
    statement.raw(false);
  }
  return arrays.map((values) => {
    const row: Record<string, unknown> = {};
    for (let i = 0; i < names.length; i += 1) row[names[i]!] = values[i];
    return row;
  });
}
