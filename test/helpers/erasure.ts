/** What the erasure suites share: a person to erase, requests from their client, and a search of every column. */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { LightMyRequestResponse } from 'fastify';
import { sql } from 'kysely';
import type { SealedCheckpoint } from '../../src/auth/audit/checkpoint-signature.js';
import { sealBatch } from '../../src/auth/audit/sealer.js';
import type { AppContext } from '../../src/auth/context.js';
import { connectPostgres } from '../../src/db/connect.js';
import { dialectOf, type Database, type Db } from '../../src/db/database.js';
import type { TestApp } from './app.js';
import { TEST_POSTGRES_URL } from './database.js';

/** A client: the socket peer address and the User-Agent header. */
export interface Client {
  readonly ip: string;
  readonly userAgent: string;
}

/**
 * The person whose data is erased: values distinctive enough that finding one anywhere means it
 * came from them (the username is searched case-insensitively, as its key is folded).
 */
export const PERSON = {
  username: 'Zephyrine.Quillfeather8841',
  email: 'zephyrine.q8841@erasure-probe.example',
  ip: '203.0.113.188',
  userAgent: 'QuillProbe/88.41 (erasure test)',
} as const;

/** Everyone else's client. */
export const OTHER_CLIENT: Client = { ip: '198.51.100.23', userAgent: 'OtherBrowser/1.0' };

/** A JSON POST from `client`. */
export function postFrom(t: TestApp, url: string, body: unknown, client: Client): Promise<LightMyRequestResponse> {
  return t.app.inject({
    method: 'POST',
    url,
    remoteAddress: client.ip,
    headers: { 'content-type': 'application/json', 'user-agent': client.userAgent },
    payload: JSON.stringify(body),
  });
}

/** A password login from `client` (the admin's own password unless `password` is given). */
export function loginFrom(t: TestApp, admin: { schoolId: string; username: string; password: string }, client: Client, password = admin.password) {
  return postFrom(t, '/admin/auth/login', { school_id: admin.schoolId, username: admin.username, password }, client);
}

/** Every table of the database and its columns, read from the schema itself (not from our types). */
async function tablesAndColumns(db: Db): Promise<Map<string, string[]>> {
  const columns = new Map<string, string[]>();
  if (dialectOf(db) === 'postgres') {
    const rows = await sql<{ table_name: string; column_name: string }>`
      select c.table_name, c.column_name from information_schema.columns c
      join information_schema.tables t on t.table_schema = c.table_schema and t.table_name = c.table_name
      where c.table_schema = current_schema() and t.table_type = 'BASE TABLE' order by c.table_name, c.ordinal_position`.execute(db);
    for (const row of rows.rows) columns.set(row.table_name, [...(columns.get(row.table_name) ?? []), row.column_name]);
    return columns;
  }
  const tables = await sql<{ name: string }>`select name from sqlite_master where type = 'table'`.execute(db);
  for (const { name } of tables.rows) {
    const info = await sql<{ name: string }>`select name from pragma_table_info(${name})`.execute(db);
    columns.set(name, info.rows.map((column) => column.name));
  }
  return columns;
}

/** A value as text to search: strings as they are, bytes as UTF-8, anything else as JSON. */
const asText = (value: unknown): string => (Buffer.isBuffer(value) ? value.toString('utf8') : typeof value === 'string' ? value : JSON.stringify(value));

/**
 * Where any of `needles` can still be read: every column of every row of every table, as
 * `table.column: value`. Case-insensitive.
 */
export async function tracesOf(db: Db, needles: readonly string[]): Promise<string[]> {
  const found: string[] = [];
  const lowered = needles.map((needle) => needle.toLowerCase());
  let searched = 0;
  for (const [table, columns] of await tablesAndColumns(db)) {
    const rows = await sql<Record<string, unknown>>`select ${sql.join(columns.map((column) => sql.ref(column)))} from ${sql.table(table)}`.execute(db);
    for (const row of rows.rows) {
      for (const column of columns) {
        const text = asText(row[column] ?? null);
        searched += 1;
        if (lowered.some((needle) => text.toLowerCase().includes(needle))) found.push(`${table}.${column}: ${text}`);
      }
    }
  }
  // A search that read nothing would pass whatever the database holds.
  if (searched < 100) throw new Error(`only ${searched} values searched: the schema was not read`);
  return found;
}

/** Seals everything waiting, keeping each checkpoint as the sealer logs it (for `--against`). */
export async function sealShipping(services: Pick<AppContext, 'db' | 'clock' | 'keys'>, shipped: SealedCheckpoint[]): Promise<void> {
  for (let checkpoint = await sealBatch(services); checkpoint !== undefined; checkpoint = await sealBatch(services)) shipped.push(checkpoint);
}

/** The shipped log: one `audit checkpoint` line per checkpoint version, among other lines; removed after the suite. */
export function shippedLog(checkpoints: readonly SealedCheckpoint[]): { file: string; remove: () => void } {
  const dir = mkdtempSync(join(tmpdir(), 'school-auth-erasure-'));
  const file = join(dir, 'shipped.log');
  const lines = checkpoints.map(({ events, ...checkpoint }) => JSON.stringify({ level: 30, audit_checkpoint: checkpoint, events, msg: 'audit checkpoint' }));
  writeFileSync(file, `${['{"level":30,"msg":"request completed"}', ...lines].join('\n')}\n`);
  return { file, remove: () => rmSync(dir, { recursive: true, force: true }) };
}

/** A second pool on the same PostgreSQL schema as `db`: its transactions run on connections of their own. */
export async function secondPostgresConnection(db: Db): Promise<Database> {
  const { rows } = await sql<{ schema: string }>`select current_schema() as schema`.execute(db);
  const url = new URL(TEST_POSTGRES_URL);
  url.searchParams.set('options', `-c search_path=${rows[0]?.schema ?? 'public'}`);
  return connectPostgres(url.toString());
}
