import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The repository root and the compiled command line (`npm run build` must have run). */
export const REPO_ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');
export const CLI_MAIN = join(REPO_ROOT, 'dist', 'cli', 'main.js');

if (!existsSync(CLI_MAIN)) throw new Error(`${CLI_MAIN} is missing: run \`npm run build\` before these tests`);

/** Settings the service reads: never inherited from the environment of whoever runs the tests. */
const SERVICE_VARIABLE =
  /^(HOST|PORT|DATA_DIR|DATABASE_.*|SQLITE_.*|ISSUER|AUDIENCE|JWT_ALG|ACCESS_TOKEN_TTL|REFRESH_.*|KEY_.*|ARGON2_.*|HASH_.*|LOGIN_THROTTLE|THROTTLE_.*|LOCKOUT_FAILURES|BODY_LIMIT|REQUEST_TIMEOUT|TRUST_PROXY|LOG_LEVEL|SHUTDOWN_TIMEOUT|METRICS_ENABLED|MANAGEMENT_.*|DOCS_ENABLED|CORS_ORIGINS|WEBAUTHN_.*|AUDIT_.*|PUBLIC_URL|SSO_.*|SMTP_.*|WEBHOOK_.*|PASSWORD_RECOVERY_.*|NODE_OPTIONS)$/;

/** The test runner's environment without any service setting, plus `extra` (undefined removes). */
export function childEnv(extra: Record<string, string | undefined> = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [name, value] of Object.entries(process.env)) {
    if (!SERVICE_VARIABLE.test(name)) env[name] = value;
  }
  // Servers of tests running side by side must not all take the management port 9000.
  env.MANAGEMENT_PORT = '0';
  for (const [name, value] of Object.entries(extra)) {
    if (value === undefined) delete env[name];
    else env[name] = value;
  }
  return env;
}

export interface CliResult {
  /** Exit code, or null when the process was killed by a signal. */
  readonly code: number | null;
  readonly signal: NodeJS.Signals | null;
  readonly stdout: string;
  readonly stderr: string;
}

export interface RunOptions {
  /** Written to standard input, which is then closed. Standard input is an (empty) pipe otherwise. */
  readonly input?: string;
  /** Extra environment variables (DATA_DIR is set by the caller). */
  readonly env?: Record<string, string | undefined>;
  readonly cwd?: string;
  readonly timeoutMs?: number;
}

/** Runs `node dist/cli/main.js ...args` as a real subprocess; `track` receives the child. */
export function runCli(args: readonly string[], options: RunOptions & { cwd: string }, track?: (child: ChildProcess) => void): Promise<CliResult> {
  return new Promise((resolvePromise, reject) => {
    const child = spawn(process.execPath, [CLI_MAIN, ...args], {
      cwd: options.cwd,
      env: childEnv(options.env),
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    track?.(child);
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`school-auth ${args.join(' ')} did not finish within ${options.timeoutMs ?? 60_000} ms\nstdout: ${stdout}\nstderr: ${stderr}`));
    }, options.timeoutMs ?? 60_000);
    child.on('error', (error) => {
      clearTimeout(timer);
      reject(error);
    });
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      resolvePromise({ code, signal, stdout, stderr });
    });
    // The child may exit before reading its input: that is not an error of the test.
    child.stdin.on('error', () => undefined);
    child.stdin.end(options.input ?? '');
  });
}

/** Whether a child process is still running. */
export function isRunning(child: ChildProcess): boolean {
  return child.exitCode === null && child.signalCode === null;
}
