import { createHash } from 'node:crypto';
import type { PostgresPool, PostgresPoolClient } from 'kysely';
import type pg from 'pg';

/**
 * Data statements with explicit columns. A prepared `select *` fails once a migration adds a
 * column ("cached plan must not change result type"), and DDL runs once: neither is named.
 */
const NAMEABLE = /^\s*(select|insert|update|delete|with)\b/i;

/** A statement's name is its text's digest: the same text on every connection and instance. */
function nameOf(text: string): string | undefined {
  if (!NAMEABLE.test(text) || text.includes('*')) return undefined;
  return `s_${createHash('sha256').update(text).digest('hex').slice(0, 40)}`;
}

/**
 * Hands Kysely the pool's connections with one change, below every call site: data statements
 * run as named prepared statements, so PostgreSQL parses and plans each text once per connection
 * instead of once per request (planning a four-table join costs more than running it;
 * bench/README.md, the ledger). Names are
 * remembered per pool, bounded like the SQLite statement cache.
 */
export function withNamedStatements(pool: pg.Pool): PostgresPool {
  const names = new Map<string, string | undefined>();
  const named = (text: string): string | undefined => {
    if (names.has(text)) return names.get(text);
    if (names.size >= 1000) names.clear();
    const name = nameOf(text);
    names.set(text, name);
    return name;
  };
  // One wrapper per client, so that Kysely, which keeps its connection object per client, finds it again.
  const wrapped = new WeakMap<pg.PoolClient, PostgresPoolClient>();
  const wrap = (client: pg.PoolClient): PostgresPoolClient => {
    let connection = wrapped.get(client);
    if (connection !== undefined) return connection;
    const query = (text: string, parameters: readonly unknown[]) => {
      const name = named(text);
      return name === undefined ? client.query(text, [...parameters]) : client.query({ name, text, values: [...parameters] });
    };
    connection = { query: query as unknown as PostgresPoolClient['query'], release: () => client.release() };
    wrapped.set(client, connection);
    return connection;
  };
  return {
    connect: async () => wrap(await pool.connect()),
    end: () => pool.end(),
  };
}
