import { createSecretKey, type KeyObject } from 'node:crypto';
import { closeSync, fstatSync, openSync, readFileSync } from 'node:fs';
import { resolve } from 'node:path';

/** The base64 of exactly 32 bytes, as `head -c 32 /dev/urandom | base64` writes it. */
const BASE64_OF_32_BYTES = /^[A-Za-z0-9+/]{43}=$/;

/**
 * The key that encrypts private signing keys at rest (KEY_ENCRYPTION_KEY_FILE). Its bytes live in
 * a KeyObject and it serializes as its file name only, so `config check` or a log of the
 * configuration never shows the key.
 */
export class KeyEncryptionKey {
  constructor(
    readonly file: string,
    readonly key: KeyObject,
  ) {}

  toJSON(): { file: string } {
    return { file: this.file };
  }
}

/** Reads the key file, or says what is wrong with it in terms of KEY_ENCRYPTION_KEY_FILE. */
export function readKeyEncryptionKey(name: string, path: string): KeyEncryptionKey | string {
  const file = resolve(path);
  let text: string;
  let mode: number;
  try {
    // One open for the check and the read: the file checked is the file read.
    const fd = openSync(file, 'r');
    try {
      const stats = fstatSync(fd);
      if (!stats.isFile()) return `${name}: ${file} is not a regular file`;
      mode = stats.mode & 0o777;
      text = readFileSync(fd, 'utf8');
    } finally {
      closeSync(fd);
    }
  } catch (error) {
    return `${name}: cannot read ${file} (${(error as NodeJS.ErrnoException).code ?? String(error)})`;
  }
  // Whoever can read this file and a copy of the database has the signing keys: like an SSH
  // private key, it is refused unless only its owner can use it. Windows has no such modes.
  if (process.platform !== 'win32' && (mode & 0o077) !== 0) {
    return `${name}: ${file} is accessible to other users (mode ${mode.toString(8)}); restrict it with: chmod 600 ${file}`;
  }
  const encoded = text.trim();
  if (!BASE64_OF_32_BYTES.test(encoded)) {
    return `${name}: ${file} must hold 32 random bytes in base64 (create it with: head -c 32 /dev/urandom | base64 > ${file})`;
  }
  return new KeyEncryptionKey(file, createSecretKey(Buffer.from(encoded, 'base64')));
}
