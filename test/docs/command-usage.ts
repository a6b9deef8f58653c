import type { CliCommand } from '../helpers/cli-command-tree.js';

/** A usage as written in the docs (`admin mfa reset --school S ...`), resolved against the real commands. */
export interface ResolvedUsage {
  readonly command: CliCommand;
  readonly options: readonly string[];
}

const key = (path: readonly string[]): string => path.join(' ');

/**
 * Resolves the words after `school-auth`: subcommands while the command so far has them, then
 * arguments. `a|b` names alternatives (`admin mfa list|reset`). Returns the problem as text when
 * a word is no subcommand of a group or an option is not the command's.
 */
export function resolveUsage(usage: string, commands: readonly CliCommand[]): ResolvedUsage[] | string {
  const byPath = new Map(commands.map((command) => [key(command.path), command]));
  const tokens = usage.split(/\s+/).filter((token) => token !== '');
  let paths: string[][] = [[]];
  let index = 0;
  for (; index < tokens.length; index += 1) {
    const group = byPath.get(key(paths[0]!));
    if (group === undefined || !group.group) break;
    const token = tokens[index]!;
    // Only bare words name subcommands: an option, `[--x`, `<arg>` or `...` (any command) ends the
    // name, and belongs to the command named so far (`events --school S` while events has subcommands).
    if (!/^[a-z][a-z0-9-]*(\\?\|[a-z][a-z0-9-]*)*$/.test(token)) break;
    const names = token.split(/\\?\|/);
    const next = paths.flatMap((path) => names.map((name) => [...path, name]));
    const unknown = next.find((path) => !byPath.has(key(path)));
    if (unknown !== undefined) return `"school-auth ${usage}": there is no command "school-auth ${key(unknown)}"`;
    paths = next;
  }
  const options = tokens.slice(index).flatMap((token) => token.match(/(?<![\w-])--[a-z][a-z-]*/g) ?? []);
  const resolved = paths.map((path) => ({ command: byPath.get(key(path))!, options }));
  for (const { command } of resolved) {
    const stray = options.find((option) => !command.options.includes(option));
    if (stray !== undefined) return `"school-auth ${usage}": "school-auth ${key(command.path)}" has no option ${stray}`;
  }
  return resolved;
}
