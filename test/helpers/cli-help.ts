import { spawn } from 'node:child_process';
import { CLI_MAIN, REPO_ROOT, childEnv } from './cli-run.js';

/** One command of `school-auth`, as its own `--help` describes it. */
export interface CliCommand {
  /** The words that name it: `['admin', 'mfa', 'reset']`. */
  readonly path: readonly string[];
  /** Its long options, without `--help`: `['--school', '--username']`. */
  readonly options: readonly string[];
  /** Whether it has subcommands of its own (then it runs nothing itself). */
  readonly group: boolean;
}

function helpOf(path: readonly string[]): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [CLI_MAIN, ...path, '--help'], { cwd: REPO_ROOT, env: childEnv(), stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
    child.on('error', reject);
    child.on('close', (code) => (code === 0 ? resolve(stdout) : reject(new Error(`school-auth ${path.join(' ')} --help exited ${code}`))));
  });
}

/** The entries of a `Title:` block of commander's help; continuation lines are indented further. */
function entries(help: string, title: string): string[] {
  const block = help.split(`\n${title}:\n`)[1]?.split('\n\n')[0] ?? '';
  return block.split('\n').filter((line) => /^ {2}\S/.test(line)).map((line) => line.trim());
}

/** Every command and subcommand, found by asking each one for its help, as an operator would. */
export async function listCliCommands(path: readonly string[] = []): Promise<CliCommand[]> {
  const help = await helpOf(path);
  const options = entries(help, 'Options')
    .map((entry) => /^(?:-\w, )?(--[a-z][a-z-]*)/.exec(entry)?.[1])
    .filter((option): option is string => option !== undefined && option !== '--help');
  const subcommands = entries(help, 'Commands')
    .map((entry) => entry.split(/\s/)[0]!)
    .filter((name) => name !== 'help');
  const self: CliCommand = { path, options, group: subcommands.length > 0 };
  const below = await Promise.all(subcommands.map((name) => listCliCommands([...path, name])));
  return [self, ...below.flat()];
}
