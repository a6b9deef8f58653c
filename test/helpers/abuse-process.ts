/**
 * The compiled service as child processes, for the crash tests: `node dist/cli/main.js ...` with a
 * clean environment (no service setting inherited from whoever runs the tests).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { send } from './abuse-http.js';
import { CLI_MAIN, childEnv, runCli, type CliResult } from './cli-run.js';

export { CLI_MAIN as MAIN, REPO_ROOT as REPO } from './cli-run.js';

export function requireBuild(): void {
  if (!existsSync(CLI_MAIN)) throw new Error(`${CLI_MAIN} is missing: run \`npm run build\` before the crash tests`);
}

export function cleanEnv(extra: Record<string, string>): NodeJS.ProcessEnv {
  return childEnv(extra);
}

export type Finished = CliResult;

/** Runs one CLI command to its end (stdin: `input`, then closed). */
export function cli(args: readonly string[], env: Record<string, string>, cwd: string, input = ''): Promise<Finished> {
  return runCli(args, { env, cwd, input, timeoutMs: 30_000 });
}

/** `school-auth serve` as a child process. */
export class ServiceProcess {
  stdout = '';
  stderr = '';
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;

  private constructor(readonly child: ChildProcess) {
    child.stdout?.setEncoding('utf8').on('data', (chunk: string) => (this.stdout += chunk));
    child.stderr?.setEncoding('utf8').on('data', (chunk: string) => (this.stderr += chunk));
    this.exited = new Promise((resolvePromise) => child.on('close', (code, signal) => resolvePromise({ code, signal })));
  }

  static start(env: Record<string, string>, cwd: string): ServiceProcess {
    return new ServiceProcess(spawn(process.execPath, [CLI_MAIN, 'serve'], { cwd, env: cleanEnv(env), stdio: ['ignore', 'pipe', 'pipe'] }));
  }

  get running(): boolean {
    return this.child.exitCode === null && this.child.signalCode === null;
  }

  async waitHealthy(port: number, timeoutMs = 30_000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (Date.now() < deadline) {
      if (!this.running) throw new Error(`the server exited before it was healthy\n${this.stdout}\n${this.stderr}`);
      const answer = await send(port, '/healthz', { timeoutMs: 1000 }).catch(() => undefined);
      if (answer?.status === 200) return;
      await new Promise((resolvePromise) => setTimeout(resolvePromise, 50));
    }
    throw new Error(`no healthy server on port ${port} within ${timeoutMs} ms\n${this.stdout}\n${this.stderr}`);
  }

  /** Signals this child (only it) and waits for it to end. */
  async stop(signal: NodeJS.Signals): Promise<{ code: number | null; signal: NodeJS.Signals | null }> {
    if (this.running) this.child.kill(signal);
    return this.exited;
  }
}
