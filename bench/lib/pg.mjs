// A throw-away PostgreSQL database for one benchmark run.
import { URL } from 'node:url';
import { randomBytes } from 'node:crypto';
import { createRequire } from 'node:module';

const require = createRequire(new URL('../../package.json', import.meta.url));
const pg = require('pg');

async function admin(adminUrl, action) {
  const client = new pg.Client({ connectionString: adminUrl, connectionTimeoutMillis: 5000 });
  await client.connect();
  try {
    return await action(client);
  } finally {
    await client.end();
  }
}

/** CREATE DATABASE school_auth_bench_<random> on the server of adminUrl; returns its URL and drop(). */
export async function createBenchDatabase(adminUrl) {
  const name = `school_auth_bench_${randomBytes(5).toString('hex')}`;
  await admin(adminUrl, (client) => client.query(`CREATE DATABASE "${name}"`));
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  let dropped = false;
  return {
    name,
    url: url.toString(),
    async drop() {
      if (dropped) return;
      dropped = true;
      await admin(adminUrl, async (client) => {
        try {
          await client.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
        } catch {
          // before PostgreSQL 13: end the sessions first
          await client.query('SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid()', [name]);
          await client.query(`DROP DATABASE IF EXISTS "${name}"`);
        }
      });
    },
  };
}

/** What a server needs to run on `database` (see serverEnv; several instances share one issuer). */
export function databaseEnv(database) {
  return database === undefined ? {} : { DATABASE_URL: database.url, ISSUER: 'http://bench.school-auth.test' };
}
