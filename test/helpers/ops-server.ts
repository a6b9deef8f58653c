/**
 * The one way a test has a served process answering: `startServer()` runs the compiled service
 * (`npm run build` first) on a free port and resolves once GET /healthz answers, by default in a
 * fresh temporary working directory holding its SQLite DATA_DIR. `cleanupOps()` kills every server
 * and command started here and removes those directories; `seedWithCli` and `loginHttp` drive it.
 * A process that may never become healthy is started with `ServerProcess` (server-process.ts).
 */
import type { ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { runCli, type CliResult, type RunOptions } from './cli-run.js';
import { freePort } from './free-port.js';
import { ServerProcess, type Exit } from './server-process.js';

export { CLI_MAIN, REPO_ROOT, childEnv as serviceEnv } from './cli-run.js';

export type { CliResult };

const children = new Set<ChildProcess>();
const directories = new Set<string>();

function track(child: ChildProcess): void {
  children.add(child);
  child.once('exit', () => children.delete(child));
}

/** A command on a started server's database, tracked so that `cleanupOps()` can stop it. */
function runTracked(args: readonly string[], options: RunOptions & { cwd: string }): Promise<CliResult> {
  return runCli(args, { ...options, timeoutMs: options.timeoutMs ?? 20_000 }, track);
}

/** A fresh temporary directory, removed by `cleanupOps()`. */
export function tempDir(prefix = 'school-auth-ops-'): string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  directories.add(dir);
  return dir;
}

export interface RunningServer {
  readonly port: number;
  /** http://127.0.0.1:<port>, where it answered GET /healthz. */
  readonly url: string;
  /** The management listener (/metrics, /healthz, /readyz): 127.0.0.1, the free port chosen, unless `env` sets them. */
  readonly managementUrl: string;
  /** The working directory of the server and of `cli()`; `.env` and a relative DATA_DIR are read there. */
  readonly cwd: string;
  /** Where DATA_DIR points (a DATA_DIR from a `.env` aside). */
  readonly dataDir: string;
  /** Its settings, HOST and PORT included; undefined: removed from the environment. */
  readonly env: Record<string, string | undefined>;
  /** The process itself: `stop()`, `logLines()`, `requestLines()`. */
  readonly server: ServerProcess;
  readonly child: ChildProcess;
  /** Everything the server wrote so far. */
  stdout(): string;
  stderr(): string;
  /** A CLI command on the same database and settings. */
  cli(args: readonly string[], options?: { input?: string; env?: Record<string, string> }): Promise<CliResult>;
  /** Resolves with the exit code and signal once the process has exited. */
  exited: Promise<Exit>;
}

export interface ServeOptions {
  /** The working directory: a fresh temporary one, removed by `cleanupOps()`, when omitted. */
  readonly cwd?: string;
  /** How long to wait for GET /healthz (30 s). */
  readonly startTimeoutMs?: number;
}

/**
 * Starts `node dist/cli/main.js serve` on a free port of 127.0.0.1 (HOST and PORT are set here)
 * and resolves once it answers GET /healthz; kills it and rejects with its output when it exits or
 * does not come up in time. `env` goes over DATA_DIR=<cwd>/data, a free MANAGEMENT_PORT and
 * KEY_ACTIVATION_DELAY=0; a variable given as undefined is removed (the service's default applies).
 */
export async function startServer(env: Record<string, string | undefined> = {}, options: ServeOptions = {}): Promise<RunningServer> {
  const cwd = options.cwd ?? tempDir();
  const managementPort = await freePort();
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  const settings = { DATA_DIR: join(cwd, 'data'), MANAGEMENT_PORT: String(managementPort), KEY_ACTIVATION_DELAY: '0', ...env, HOST: '127.0.0.1', PORT: String(port) };
  const server = ServerProcess.start({ cwd, env: settings });
  track(server.child);
  try {
    await server.waitHealthy(url, options.startTimeoutMs);
  } catch (error) {
    server.kill();
    throw error;
  }
  return {
    port,
    url,
    managementUrl: `http://127.0.0.1:${managementPort}`,
    cwd,
    dataDir: resolve(cwd, settings.DATA_DIR ?? 'data'),
    env: settings,
    server,
    child: server.child,
    stdout: () => server.stdout,
    stderr: () => server.stderr,
    cli: (args, cliOptions = {}) => runTracked(args, { cwd, env: { ...settings, ...cliOptions.env }, input: cliOptions.input }),
    exited: server.exited,
  };
}

export function sleep(ms: number): Promise<void> {
  return new Promise((resolveSleep) => setTimeout(resolveSleep, ms));
}

/** Kills every child the ops helpers started and removes their directories (for afterEach). */
export async function cleanupOps(): Promise<void> {
  const waits = [...children].map(
    (child) =>
      new Promise<void>((resolveExit) => {
        if (child.exitCode !== null || child.signalCode !== null) return resolveExit();
        child.once('exit', () => resolveExit());
        child.kill('SIGKILL');
      }),
  );
  await Promise.all(waits);
  children.clear();
  for (const dir of directories) rmSync(dir, { recursive: true, force: true });
  directories.clear();
}

/** The seeded school and admin of a scenario. */
export const OPS_SCHOOL = 's1';
export const OPS_USERNAME = 'alice';

/** Creates school s1 and admin alice with `password` through the real CLI. */
export async function seedWithCli(server: RunningServer, password: string): Promise<CliResult[]> {
  const school = await server.cli(['school', 'add', OPS_SCHOOL]);
  if (school.code !== 0) throw new Error(`school add failed: ${school.stderr}`);
  const admin = await server.cli(['admin', 'add', '--school', OPS_SCHOOL, '--username', OPS_USERNAME, '--password-stdin'], { input: `${password}\n` });
  if (admin.code !== 0) throw new Error(`admin add failed: ${admin.stderr}`);
  return [school, admin];
}

export async function loginHttp(server: RunningServer, password: string, headers: Record<string, string> = {}): Promise<Response> {
  return fetch(`${server.url}/admin/auth/login`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify({ school_id: OPS_SCHOOL, username: OPS_USERNAME, password }),
  });
}
