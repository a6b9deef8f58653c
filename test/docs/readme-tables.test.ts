import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { listCliCommands, type CliCommand } from '../helpers/cli-command-tree.js';
import { REPO_ROOT } from '../helpers/cli-run.js';
import { resolveUsage } from './command-usage.js';
import { codeSpans, commandUsages, firstCells, operatorDocuments, readRepoFile, section } from './markdown.js';
import { configurationVariables } from './config-variables.js';

// The README's command and configuration tables are what operators run the service by: both
// directions are checked, so a command or setting added without its row, or a row left behind by
// a removed one, fails here.

const README = readRepoFile('README.md');
let commands: CliCommand[] = [];
beforeAll(async () => {
  commands = await listCliCommands();
}, 60_000);

/** Commands that run something: those without subcommands, and those with options of their own. */
const runnable = (): CliCommand[] => commands.filter((command) => !command.group || command.options.length > 0);
const tableUsages = (): string[] => firstCells(section(README, 'Command line')).flatMap(codeSpans).map((span) => span.replace(/^school-auth /, ''));

describe('the README command table', () => {
  it('finds the commands it checks against', () => {
    expect(runnable().map((command) => command.path.join(' '))).toEqual(expect.arrayContaining(['serve', 'admin mfa reset', 'keys encrypt']));
  });

  it('names only commands and options that exist', () => {
    const problems = tableUsages().map((usage) => resolveUsage(usage, commands)).filter((result) => typeof result === 'string');
    expect(problems).toEqual([]);
  });

  it('has a row for every command, with every option it takes', () => {
    const shown = tableUsages().flatMap((usage) => {
      const resolved = resolveUsage(usage, commands);
      return typeof resolved === 'string' ? [] : resolved;
    });
    const missing = runnable().flatMap((command) => {
      const rows = shown.filter((usage) => usage.command === command);
      if (rows.length === 0) return [`school-auth ${command.path.join(' ')}`];
      const options = new Set(rows.flatMap((row) => row.options));
      return command.options.filter((option) => !options.has(option)).map((option) => `school-auth ${command.path.join(' ')} ${option}`);
    });
    expect(missing).toEqual([]);
  });
});

describe('every command the README and docs/ show', () => {
  it('exists, with the options it is shown with', () => {
    const problems = operatorDocuments().flatMap((file) =>
      commandUsages(readRepoFile(file))
        .map((usage) => resolveUsage(usage, commands))
        .filter((result): result is string => typeof result === 'string')
        .map((problem) => `${file}: ${problem}`),
    );
    expect(problems).toEqual([]);
  });
});

describe.each(['README.md', 'docs/configuration.md'])('the configuration table of %s', (file) => {
  const rows = () => firstCells(section(readRepoFile(file), file === 'README.md' ? 'Configuration' : 'Variables'));
  const variables = () => rows().map((cell) => /^`([A-Z][A-Z0-9_]*)`$/.exec(cell)?.[1] ?? cell);

  it('lists every variable the configuration reads, once', () => {
    const listed = variables();
    expect(listed.filter((name, index) => listed.indexOf(name) !== index)).toEqual([]);
    expect([...configurationVariables()].filter((name) => !listed.includes(name))).toEqual([]);
  });

  it('lists nothing else', () => {
    const known = configurationVariables();
    expect(variables().filter((name) => !known.has(name))).toEqual([]);
  });
});

describe('the configuration is read in src/config/ only', () => {
  it('no other source file reads process.env', () => {
    const readers = (readdirSync(join(REPO_ROOT, 'src'), { recursive: true }) as string[])
      .filter((path) => path.endsWith('.ts') && !path.startsWith('config'))
      .filter((path) => readRepoFile(join('src', path)).includes('process.env'));
    expect(readers).toEqual([]);
  });
});
