import { read } from 'read';
import { UsageError } from '../errors.js';

async function readStdin(): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

/** A secret (an IdP client secret), never from argv: from standard input, else a prompt that does not echo. */
export async function readSecret(fromStdin: boolean, prompt: string): Promise<string> {
  if (fromStdin) return (await readStdin()).replace(/\r?\n$/, '');
  if (!process.stdin.isTTY) throw new UsageError('no terminal to ask for the client secret; pipe it in with --client-secret-stdin');
  const secret = await read({ prompt, silent: true, replace: '' });
  process.stdout.write('\n');
  return secret;
}

/**
 * The new password, never from argv (it would show in `ps` and shell history): from standard
 * input with --password-stdin (one trailing newline dropped), else from a prompt that does not
 * echo, asked twice.
 */
export async function readNewPassword(fromStdin: boolean): Promise<string> {
  if (fromStdin) return (await readStdin()).replace(/\r?\n$/, '');
  if (!process.stdin.isTTY) throw new UsageError('no terminal to ask for the password; pipe it in with --password-stdin');
  const first = await read({ prompt: 'New password: ', silent: true, replace: '' });
  // The hidden input ends without an echoed newline: add it, so the next line starts clean.
  process.stdout.write('\n');
  const second = await read({ prompt: 'Repeat password: ', silent: true, replace: '' });
  process.stdout.write('\n');
  if (first !== second) throw new UsageError('the two passwords do not match');
  return first;
}
