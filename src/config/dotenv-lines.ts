import { lineNotice, type SettingNotice } from './setting-notice.js';

interface DotEnvScan {
  /** The names that lines define, with their line numbers. */
  readonly names: readonly { readonly line: number; readonly name: string }[];
  /** Lines that are not plain `NAME=value`. */
  readonly notices: readonly SettingNotice[];
}

const NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;
const QUOTES = ['"', "'", '`'];
const NOT_AN_ASSIGNMENT = 'not a NAME=value line; write NAME=value, or begin a comment with #';

/** The index of the line that closes a quoted value opened on line `start`, or -1 if none does. */
function closingLine(lines: readonly string[], start: number, value: string): number {
  const quote = value[0]!;
  if (value.indexOf(quote, 1) > 0) return start;
  for (let index = start + 1; index < lines.length; index++) if (lines[index]!.includes(quote)) return index;
  return -1;
}

/**
 * Reads a `.env` file line by line, as strictly as the strictest reader of such files: what Node.js
 * does with anything but `NAME=value` depends on its version (Node 20 joins a line without `=` to
 * the next and loses that line's setting), docker's `--env-file` refuses spaces around `=`, and a
 * shell runs such a line as a command. Quoted values may span lines.
 */
export function scanDotEnv(text: string): DotEnvScan {
  const names: { line: number; name: string }[] = [];
  const notices: SettingNotice[] = [];
  if (text.startsWith('\uFEFF')) notices.push(lineNotice(1, undefined, 'the file begins with a byte-order mark, which becomes part of the first name; save .env without it'));
  const lines = text.replace(/^\uFEFF/, '').split(/\r?\n/);
  for (let index = 0; index < lines.length; index++) {
    const line = index + 1;
    const raw = lines[index]!;
    if (raw.trim() === '' || raw.trimStart().startsWith('#')) continue;
    const equals = raw.indexOf('=');
    const left = equals < 0 ? '' : raw.slice(0, equals);
    const name = left.trim().replace(/^export /, '');
    if (!NAME.test(name)) {
      notices.push(lineNotice(line, undefined, NOT_AN_ASSIGNMENT));
      continue;
    }
    names.push({ line, name });
    const value = raw.slice(equals + 1);
    if (/\s$/.test(left) || /^\s/.test(value)) {
      notices.push(lineNotice(line, name, `spaces around "=" after ${name}; write ${name}=<value>, without them (docker --env-file refuses them and a shell runs the line as a command)`));
    }
    const start = value.trimStart();
    if (!QUOTES.includes(start[0] ?? '')) continue;
    const closing = closingLine(lines, index, start);
    if (closing < 0) notices.push(lineNotice(line, name, `the value of ${name} opens a quote (${start[0]!}) that no later line closes; close it, or remove it`));
    else index = closing;
  }
  return { names, notices };
}
