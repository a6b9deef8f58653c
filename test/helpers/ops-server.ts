import type { ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { request as httpRequest, type IncomingHttpHeaders } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runCli, type CliResult, type RunOptions } from './cli-run.js';
import { freePort } from './free-port.js';
import { serveOnFreePort, type Exit } from './server-process.js';

/**
 * Operations tests drive the REAL compiled service (`npm run build` first): `node dist/cli/main.js`
 * as child processes, each with its own temporary working directory and SQLite DATA_DIR.
 */
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
  readonly url: string;
  /** The management listener (/metrics, /healthz, /readyz) on 127.0.0.1. */
  readonly managementUrl: string;
  /** The working directory of the server and of `cli()`; DATA_DIR is inside it. */
  readonly cwd: string;
  readonly dataDir: string;
  readonly env: Record<string, string>;
  readonly child: ChildProcess;
  /** Everything the server wrote so far. */
  stdout(): string;
  stderr(): string;
  /** A CLI command on the same database and settings. */
  cli(args: readonly string[], options?: { input?: string; env?: Record<string, string> }): Promise<CliResult>;
  /** Resolves with the exit code and signal once the process has exited. */
  exited: Promise<Exit>;
}

/**
 * Starts `node dist/cli/main.js serve` on a free port with a temporary DATA_DIR; resolves once it
 * answers GET /healthz. Rejects with the server's output when it exits or does not come up.
 */
export async function startServer(extraEnv: Record<string, string> = {}, options: { cwd?: string; startTimeoutMs?: number } = {}): Promise<RunningServer> {
  const cwd = options.cwd ?? tempDir();
  const dataDir = join(cwd, 'data');
  const managementPort = await freePort();
  const settings = { DATA_DIR: dataDir, MANAGEMENT_PORT: String(managementPort), KEY_ACTIVATION_DELAY: '0', ...extraEnv };
  const { server, port, url } = await serveOnFreePort({ cwd, env: settings, timeoutMs: options.startTimeoutMs ?? 20_000 });
  track(server.child);
  const env: Record<string, string> = { ...settings, PORT: String(port), HOST: '127.0.0.1' };
  return {
    port,
    url,
    managementUrl: `http://127.0.0.1:${managementPort}`,
    cwd,
    dataDir,
    env,
    child: server.child,
    stdout: () => server.stdout,
    stderr: () => server.stderr,
    cli: (args, cliOptions = {}) => runTracked(args, { cwd, env: { ...env, ...cliOptions.env }, input: cliOptions.input }),
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

export interface HttpAnswer {
  readonly status: number;
  readonly headers: IncomingHttpHeaders;
  readonly body: string;
}

/**
 * One HTTP request on its own fresh connection (no keep-alive pool), so a test controls exactly
 * when each connection is opened. Rejects on a socket error (e.g. ECONNREFUSED).
 */
export function rawRequest(
  url: string,
  options: { method?: string; headers?: Record<string, string>; body?: string } = {},
): Promise<HttpAnswer> {
  return new Promise((resolveAnswer, reject) => {
    const request = httpRequest(url, { method: options.method ?? 'GET', headers: { connection: 'close', ...options.headers }, agent: false }, (response) => {
      let body = '';
      response.setEncoding('utf8').on('data', (chunk: string) => (body += chunk));
      response.once('end', () => resolveAnswer({ status: response.statusCode ?? 0, headers: response.headers, body }));
      response.once('error', reject);
    });
    request.once('error', reject);
    request.end(options.body);
  });
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
