import { randomBytes } from 'node:crypto';
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll } from 'vitest';
import { ConfigError, loadConfig } from '../../src/config/config.js';

/**
 * A temporary directory of key-encryption key files for one test file, removed after it; returns
 * a function that writes a new key file (32 random bytes, base64, owner-only) and gives its path.
 */
export function useKeyFiles(): () => string {
  const dir = mkdtempSync(join(tmpdir(), 'school-auth-kek-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  return () => {
    const path = join(dir, `kek-${randomBytes(4).toString('hex')}`);
    writeFileSync(path, `${randomBytes(32).toString('base64')}\n`);
    chmodSync(path, 0o600);
    return path;
  };
}

/** The problems loadConfig reports for `env`, each naming its variable; [] when it is valid. */
export function configProblems(env: Record<string, string>): readonly string[] {
  try {
    loadConfig(env);
  } catch (error) {
    if (error instanceof ConfigError) return error.problems;
    throw error;
  }
  return [];
}
