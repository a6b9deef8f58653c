import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { TEST_POSTGRES_URL } from '../helpers/database.js';

/** A whole PostgreSQL database of its own, for tests that run real server processes on it. */
export async function createPostgresDatabase(): Promise<{ url: string; drop(): Promise<void> }> {
  const name = `school_auth_test_${randomBytes(6).toString('hex')}`;
  await adminQuery(`create database ${name}`);
  const url = new URL(TEST_POSTGRES_URL);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    drop: async () => {
      await adminQuery(`drop database if exists ${name} with (force)`);
    },
  };
}

export async function adminQuery(text: string, values: unknown[] = []): Promise<pg.QueryResult> {
  const client = new pg.Client({ connectionString: TEST_POSTGRES_URL });
  await client.connect();
  try {
    return await client.query(text, values);
  } finally {
    await client.end();
  }
}
