import { spawn } from 'node:child_process';
import { pathToFileURL } from 'node:url';
import { CLI_MAIN, REPO_ROOT, childEnv } from './cli-run.js';

/** One command of `school-auth`, as commander holds it. */
export interface CliCommand {
  /** The words that name it: `['admin', 'mfa', 'reset']`. */
  readonly path: readonly string[];
  /** Its long options, without `--help`: `['--school', '--username']`. */
  readonly options: readonly string[];
  /** Whether it has subcommands of its own. */
  readonly group: boolean;
}

/**
 * Loads the real command line (dist/cli/main.js) in a child process whose commander, instead of
 * parsing the arguments, prints the tree of commands the program built: every command, however it
 * was registered, with no help text to parse.
 */
const DUMP = `
const { Command } = await import('commander');
Command.prototype.parseAsync = async function () {
  const walk = (command, path) => [
    { path, options: command.options.map((option) => option.long).filter(Boolean), group: command.commands.length > 0 },
    ...command.commands.flatMap((sub) => walk(sub, [...path, sub.name()])),
  ];
  process.stdout.write(JSON.stringify(walk(this, [])));
  return this;
};
await import(${JSON.stringify(pathToFileURL(CLI_MAIN).href)});
`;

/** Every command and subcommand of `school-auth`. */
export function listCliCommands(): Promise<CliCommand[]> {
  return new Promise((resolve, reject) => {
    // Run from the repository, so `commander` resolves to the very module the program uses.
    const child = spawn(process.execPath, ['--input-type=module', '-e', DUMP], { cwd: REPO_ROOT, env: childEnv(), stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
    child.on('error', reject);
    child.on('close', (code) => (code === 0 ? resolve(JSON.parse(stdout) as CliCommand[]) : reject(new Error(`listing the commands failed (${code}): ${stderr}`))));
  });
}
