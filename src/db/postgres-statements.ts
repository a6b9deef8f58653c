import type { PostgresPool, PostgresPoolClient } from 'kysely';
import type pg from 'pg';
import { statementNameOf } from './prepared.js';

/**
 * Hands Kysely the pool's connections with one change: the hot queries (those of prepareQuery)
 * run as named prepared statements. PostgreSQL then parses and plans each of them once per
 * connection instead of once per request; planning the refresh lookup (a four-table join) took
 * 0.6 ms against 0.09 ms to run it. Any other query goes through unchanged. (Kysely only passes
 * a cursor for streamed queries, which need a cursor class in the dialect: we configure none.)
 */
export function withNamedStatements(pool: pg.Pool): PostgresPool {
  // One wrapper per client, so that Kysely, which keeps its connection object per client, finds it again.
  const wrapped = new WeakMap<pg.PoolClient, PostgresPoolClient>();
  const wrap = (client: pg.PoolClient): PostgresPoolClient => {
    let connection = wrapped.get(client);
    if (connection === undefined) {
      const query = (text: string, parameters: readonly unknown[]) => {
        const name = statementNameOf(text);
        return name === undefined ? client.query(text, [...parameters]) : client.query({ name, text, values: [...parameters] });
      };
      connection = { query: query as unknown as PostgresPoolClient['query'], release: () => client.release() };
      wrapped.set(client, connection);
    }
    return connection;
  };
  return {
    connect: async () => wrap(await pool.connect()),
    end: () => pool.end(),
  };
}
