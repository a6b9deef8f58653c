import { randomBytes } from 'node:crypto';
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/config.js';
import { describeConfig } from '../../src/cli/commands/config.js';
import { configProblems } from '../helpers/key-files.js';

const dir = mkdtempSync(join(tmpdir(), 'school-auth-kek-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** Writes a key file with the given content and mode, as an operator would. */
function keyFile(name: string, content: string, mode = 0o600): string {
  const path = join(dir, name);
  writeFileSync(path, content);
  chmodSync(path, mode);
  return path;
}

describe('KEY_ENCRYPTION_KEY_FILE', () => {
  it('is off when unset', () => {
    expect(loadConfig({}).keyEncryption).toBeUndefined();
  });

  it('reads 32 bytes in base64 with a trailing newline, as `head -c 32 /dev/urandom | base64` writes them', () => {
    const bytes = randomBytes(32);
    const path = keyFile('good', `${bytes.toString('base64')}\n`);
    const config = loadConfig({ KEY_ENCRYPTION_KEY_FILE: path });
    expect(config.keyEncryption?.file).toBe(path);
    expect(config.keyEncryption?.key.export().equals(bytes)).toBe(true);
  });

  it('config check shows the file, never the key', () => {
    const bytes = randomBytes(32);
    const path = keyFile('shown', bytes.toString('base64'));
    const printed = JSON.stringify(describeConfig(loadConfig({ KEY_ENCRYPTION_KEY_FILE: path })));
    expect(printed).toContain(`"KEY_ENCRYPTION_KEY_FILE":${JSON.stringify(path)}`);
    expect(printed).not.toContain(bytes.toString('base64'));
  });

  it.each([
    ['16 bytes', randomBytes(16).toString('base64')],
    ['33 bytes', randomBytes(33).toString('base64')],
    ['hex', randomBytes(32).toString('hex')],
    ['base64url', randomBytes(32).toString('base64url')],
    ['empty', ''],
  ])('refuses %s, naming the variable and how to create the file', (name, content) => {
    const path = keyFile(`bad-${name}`, content);
    expect(configProblems({ KEY_ENCRYPTION_KEY_FILE: path })).toEqual([
      `KEY_ENCRYPTION_KEY_FILE: ${path} must hold 32 random bytes in base64 (create it with: head -c 32 /dev/urandom | base64 > ${path})`,
    ]);
  });

  it.runIf(process.platform !== 'win32')('refuses a file other users can read or write, naming the fix', () => {
    for (const mode of [0o644, 0o640, 0o602]) {
      const path = keyFile(`loose-${mode.toString(8)}`, randomBytes(32).toString('base64'), mode);
      expect(configProblems({ KEY_ENCRYPTION_KEY_FILE: path })).toEqual([
        `KEY_ENCRYPTION_KEY_FILE: ${path} is accessible to other users (mode ${mode.toString(8)}); restrict it with: chmod 600 ${path}`,
      ]);
    }
    expect(loadConfig({ KEY_ENCRYPTION_KEY_FILE: keyFile('owner-only', randomBytes(32).toString('base64'), 0o400) }).keyEncryption).toBeDefined();
  });

  it('refuses a missing file or a directory, among the other problems', () => {
    const missing = join(dir, 'missing');
    expect(configProblems({ KEY_ENCRYPTION_KEY_FILE: missing, PORT: 'x' })).toEqual([
      'PORT="x": expected a whole number from 0 to 65535',
      `KEY_ENCRYPTION_KEY_FILE: cannot read ${missing} (ENOENT)`,
    ]);
    expect(configProblems({ KEY_ENCRYPTION_KEY_FILE: dir })).toEqual([`KEY_ENCRYPTION_KEY_FILE: ${dir} is not a regular file`]);
  });
});
