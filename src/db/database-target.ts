import { join } from 'node:path';
import type { Config } from '../config/config.js';

export const SQLITE_FILE = 'school-auth.sqlite';

type DatabaseTarget =
  | { readonly kind: 'sqlite'; readonly file: string }
  | { readonly kind: 'postgresql'; readonly host: string; readonly port: number; readonly database: string; readonly user: string };

/**
 * Which database the configuration points at, for the start log and for messages: the SQLite
 * file, or PostgreSQL's host, port, database and user as libpq would default them. Never the
 * password: this is shown to people and written to logs.
 */
export function describeDatabase(config: Pick<Config, 'databaseUrl' | 'dataDir'>): DatabaseTarget {
  if (config.databaseUrl === undefined) return { kind: 'sqlite', file: join(config.dataDir, SQLITE_FILE) };
  const url = new URL(config.databaseUrl);
  const user = decodeURIComponent(url.username) || 'postgres';
  return {
    kind: 'postgresql',
    host: url.hostname || 'localhost',
    port: Number(url.port || 5432),
    database: decodeURIComponent(url.pathname.slice(1)) || user,
    user,
  };
}
