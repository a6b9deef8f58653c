import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import { REPO_ROOT, childEnv } from '../helpers/cli-run.js';
import { section } from '../docs/markdown.js';
import { runTool, type ToolResult } from './tools.js';

/** The lines of the fenced blocks under `## heading`, comments and blank lines dropped. */
export function shellLines(markdown: string, heading: string): string[] {
  const blocks = [...section(markdown, heading).matchAll(/^```[^\n]*\n([\s\S]*?)^```/gm)].map((match) => match[1]!);
  return blocks
    .flatMap((block) => block.split('\n'))
    .map((line) => line.replace(/(^|\s)#.*$/, '').trim())
    .filter((line) => line !== '');
}

/** A new directory for one install, removed by the caller. */
export function scratch(): string {
  return mkdtempSync(join(tmpdir(), 'school-auth-install-'));
}

/** The checkout as a fresh clone of it would be, with its files as they are now (committed or not). */
export async function copyCheckout(dest: string): Promise<void> {
  const listed = await mustRun('git', ['ls-files', '-z', '--cached', '--others', '--exclude-standard'], { cwd: REPO_ROOT });
  for (const file of listed.stdout.split('\0').filter(Boolean)) {
    if (existsSync(join(REPO_ROOT, file))) cpSync(join(REPO_ROOT, file), join(dest, file));
  }
}

/**
 * better-sqlite3 compiles SQLite from C when it cannot download a prebuilt binary (these machines
 * reach the npm registry only): minutes an install on two busy cores. Every install gets the
 * binary this checkout compiled instead, through prebuild-install's local prebuilds (and npm's
 * cached packages, prefer-offline): the docs' commands run unchanged, without that compilation.
 */
async function localPrebuilds(dir: string): Promise<Record<string, string>> {
  const pkg = join(REPO_ROOT, 'node_modules', 'better-sqlite3');
  const binary = join('build', 'Release', 'better_sqlite3.node');
  if (!existsSync(join(pkg, binary))) return {};
  const { version } = JSON.parse(readFileSync(join(pkg, 'package.json'), 'utf8')) as { version: string };
  const name = `better-sqlite3-v${version}-node-v${process.versions.modules}-${process.platform}-${process.arch}.tar.gz`;
  mkdirSync(dir, { recursive: true });
  await mustRun('tar', ['-czf', join(dir, name), '-C', pkg, binary]);
  return { npm_config_better_sqlite3_local_prebuilds: dir };
}

/**
 * The environment of someone at a terminal, as overrides of the test runner's (childEnv,
 * ServerProcess), with `npm install -g` going to `root`/`global` and its bin/ first on the PATH.
 * Nothing of the npm running these tests leaks in: neither its npm_* settings nor the
 * node_modules/.bin directories it put on the PATH, whose tsc would hide a copy that has none.
 */
export async function terminal(root: string, global = 'global'): Promise<Record<string, string | undefined>> {
  const prefix = join(root, global);
  const inherited = Object.keys(process.env).filter((name) => /^npm_/i.test(name));
  const path = (process.env.PATH ?? '').split(delimiter).filter((dir) => !dir.includes('/node_modules/.bin'));
  return {
    ...Object.fromEntries(inherited.map((name) => [name, undefined])),
    ...(await localPrebuilds(join(root, 'prebuilds'))),
    npm_config_prefix: prefix,
    npm_config_prefer_offline: 'true',
    npm_config_audit: 'false',
    npm_config_fund: 'false',
    npm_config_update_notifier: 'false',
    PATH: [join(prefix, 'bin'), ...path].join(delimiter),
  };
}

/** Runs a program to completion; rejects with its output unless it exits 0. */
export async function mustRun(command: string, args: readonly string[], options: { env?: NodeJS.ProcessEnv; cwd?: string } = {}): Promise<ToolResult> {
  const result = await runTool(command, args, options);
  if (result.code !== 0) throw new Error(`${command} ${args.join(' ')}: exit ${result.code}\n${result.stdout}\n${result.stderr}`);
  return result;
}

/** Runs lines of a doc as one bash script (a reader pasting them into a terminal), stopping at the first failure. */
export function runLines(lines: readonly string[], options: { env: Record<string, string | undefined>; cwd: string }): Promise<ToolResult> {
  return mustRun('bash', ['-e', '-c', lines.join('\n')], { cwd: options.cwd, env: childEnv(options.env) });
}

/** The version this checkout's package.json declares: what `--version` must answer. */
export const VERSION = (JSON.parse(readFileSync(join(REPO_ROOT, 'package.json'), 'utf8')) as { version: string }).version;

/** Where `school-auth` is found on the PATH of `env`, and what its `--version` answers. */
export async function onPath(env: Record<string, string | undefined>, cwd: string): Promise<{ path: string; version: string }> {
  const { stdout } = await runLines(['command -v school-auth', 'school-auth --version'], { env, cwd });
  const [path = '', version = ''] = stdout.trim().split('\n');
  return { path, version };
}
