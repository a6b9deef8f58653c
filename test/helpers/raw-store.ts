import { join } from 'node:path';
import SQLite from 'better-sqlite3';
import pg from 'pg';
import type { Dialect } from '../../src/db/database.js';
import { createPostgresDatabase } from './database.js';

/**
 * A CLI workspace's database seen from outside school-auth, through the plain driver: what a test
 * writes there as another release would, and reads back to check that nothing changed.
 */
export interface RawStore {
  /** The variables that point school-auth at it (DATA_DIR comes from the workspace). */
  readonly env: Record<string, string>;
  query(text: string): Promise<unknown[]>;
  /** The tables of school-auth's schema, by name. */
  tables(): Promise<string[]>;
  drop(): Promise<void>;
}

export async function openRawStore(dialect: Dialect, dataDir: string): Promise<RawStore> {
  return dialect === 'postgres' ? postgresStore() : sqliteStore(join(dataDir, 'school-auth.sqlite'));
}

function sqliteStore(file: string): RawStore {
  const query = (text: string) => {
    const sqlite = new SQLite(file);
    try {
      const statement = sqlite.prepare(text);
      return Promise.resolve(statement.reader ? statement.all() : [statement.run()]);
    } finally {
      sqlite.close();
    }
  };
  return {
    env: {},
    query,
    tables: async () => ((await query("select name from sqlite_master where type = 'table' order by name")) as { name: string }[]).map((row) => row.name),
    drop: () => Promise.resolve(),
  };
}

async function postgresStore(): Promise<RawStore> {
  const database = await createPostgresDatabase();
  const query = async (text: string) => {
    const client = new pg.Client({ connectionString: database.url });
    await client.connect();
    try {
      return (await client.query(text)).rows as unknown[];
    } finally {
      await client.end();
    }
  };
  return {
    env: { DATABASE_URL: database.url, ISSUER: 'https://auth.school.example' },
    query,
    tables: async () => ((await query('select tablename as name from pg_tables where schemaname = current_schema() order by tablename')) as { name: string }[]).map((row) => row.name),
    drop: () => database.drop(),
  };
}
