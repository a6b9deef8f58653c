import { existsSync, mkdirSync, mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { loadConfig } from '../../src/config/config.js';
import { connect } from '../../src/db/connect.js';
import { migrateToLatest } from '../../src/db/migrate.js';

const roots: string[] = [];
const umask = process.umask();
afterEach(() => {
  process.umask(umask);
  vi.restoreAllMocks();
  for (const root of roots.splice(0)) rmSync(root, { recursive: true, force: true });
});

function mode(path: string): string {
  return (statSync(path).mode & 0o777).toString(8);
}

async function openAndMigrate(dataDir: string): Promise<void> {
  const database = connect(loadConfig({ DATA_DIR: dataDir }));
  try {
    await migrateToLatest(database);
    const file = join(dataDir, 'school-auth.sqlite');
    for (const path of [`${file}-wal`, `${file}-shm`, `${file}.migration-lock`]) expect(existsSync(path), path).toBe(true);
  } finally {
    await database.close();
  }
}

describe('SQLite files hold private keys and password hashes: readable by the service user only', () => {
  it('creates DATA_DIR 0700 and the database, WAL, shared-memory and lock files 0600, even with umask 000', async () => {
    const root = mkdtempSync(join(tmpdir(), 'school-auth-perm-'));
    roots.push(root);
    const dataDir = join(root, 'data');
    process.umask(0o000);
    await openAndMigrate(dataDir);
    expect(mode(dataDir)).toBe('700');
    const file = join(dataDir, 'school-auth.sqlite');
    const database = connect(loadConfig({ DATA_DIR: dataDir }));
    try {
      await migrateToLatest(database);
      for (const path of [file, `${file}-wal`, `${file}-shm`, `${file}.migration-lock`]) expect(mode(path), path).toBe('600');
    } finally {
      await database.close();
    }
  });

  it('warns at start, naming the fix, when an existing DATA_DIR is readable by others', async () => {
    const root = mkdtempSync(join(tmpdir(), 'school-auth-perm-'));
    roots.push(root);
    const dataDir = join(root, 'data');
    process.umask(0o000);
    mkdirSync(dataDir, { mode: 0o755 });
    const stderr = vi.spyOn(process.stderr, 'write').mockImplementation(() => true);
    await openAndMigrate(dataDir);
    const written = stderr.mock.calls.map(([chunk]) => String(chunk)).join('');
    expect(written).toContain(`DATA_DIR ${dataDir} is accessible to other users (mode 755); restrict it with: chmod 700 ${dataDir}`);
    expect(mode(join(dataDir, 'school-auth.sqlite'))).toBe('600');
  });
});
