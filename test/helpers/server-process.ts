/**
 * The one way tests spawn the compiled service (`npm run build` first): `ServerProcess.start()`
 * runs `node dist/cli/main.js serve`, `launch()` another command (`npm start`, a Dockerfile's or a
 * systemd unit's command line, `events follow`), with a clean environment, its output collected,
 * stopped by a signal.
 *
 * Which to use: a test that needs a server answering calls `startServer()` (ops-server.ts), which
 * starts it here on a free port and resolves once GET /healthz answers. `start()` and `launch()`
 * are for tests that watch a process that may never become healthy or must be started exactly so:
 * start failures, signals and kills, another command, HOST, port or `.env` under test.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { setTimeout as sleep } from 'node:timers/promises';
import { CLI_MAIN, childEnv, isRunning } from './cli-run.js';
import { parseLogLines, type LogLine } from './log-lines.js';

export interface Exit {
  readonly code: number | null;
  readonly signal: NodeJS.Signals | null;
}

export interface StartOptions {
  /** The working directory (the test runner's when omitted); `.env` and a relative DATA_DIR are read there. */
  readonly cwd?: string;
  /** Added to a clean environment (undefined removes a variable). */
  readonly env: Record<string, string | undefined>;
}

/** A server as a child process; `stdout` and `stderr` hold everything it wrote so far. */
export class ServerProcess {
  stdout = '';
  stderr = '';
  readonly exited: Promise<Exit>;

  private constructor(readonly child: ChildProcess) {
    child.stdout?.setEncoding('utf8').on('data', (chunk: string) => (this.stdout += chunk));
    child.stderr?.setEncoding('utf8').on('data', (chunk: string) => (this.stderr += chunk));
    this.exited = new Promise((resolve) => child.on('close', (code, signal) => resolve({ code, signal })));
  }

  /** Starts `node dist/cli/main.js serve`. */
  static start(options: StartOptions): ServerProcess {
    return ServerProcess.launch(process.execPath, [CLI_MAIN, 'serve'], options);
  }

  /**
   * Starts the server through another command (`npm start`, `npx school-auth serve`), whose own
   * PID is `child.pid`; `detached` puts it in a process group of its own, as a terminal would.
   */
  static launch(command: string, args: readonly string[], options: StartOptions & { readonly detached?: boolean }): ServerProcess {
    const child = spawn(command, args, { cwd: options.cwd, env: childEnv(options.env), stdio: ['ignore', 'pipe', 'pipe'], detached: options.detached ?? false });
    return new ServerProcess(child);
  }

  get running(): boolean {
    return isRunning(this.child);
  }

  /** Polls GET /healthz until it answers 200; fails early, with the output, if the process exits. */
  async waitHealthy(baseUrl: string, timeoutMs = 30_000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (Date.now() < deadline) {
      if (!this.running) throw new Error(`the server exited before it was healthy\nstdout: ${this.stdout}\nstderr: ${this.stderr}`);
      try {
        const response = await fetch(`${baseUrl}/healthz`, { signal: AbortSignal.timeout(2000) });
        if (response.status === 200) return;
      } catch {
        // not listening yet
      }
      await sleep(100);
    }
    throw new Error(`${baseUrl}/healthz did not answer 200 within ${timeoutMs} ms\nstdout: ${this.stdout}\nstderr: ${this.stderr}`);
  }

  /** Resolves with the exit, or rejects if the process is still running after `timeoutMs`. */
  async waitExit(timeoutMs = 20_000): Promise<Exit> {
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`the server did not exit within ${timeoutMs} ms\nstdout: ${this.stdout}\nstderr: ${this.stderr}`)), timeoutMs);
    });
    try {
      return await Promise.race([this.exited, timeout]);
    } finally {
      clearTimeout(timer);
    }
  }

  /** Sends `signal` to this child (only it) and waits for the exit. */
  async stop(signal: NodeJS.Signals = 'SIGTERM', timeoutMs = 20_000): Promise<Exit> {
    if (this.running) this.child.kill(signal);
    return this.waitExit(timeoutMs);
  }

  /** Last resort for cleanup. */
  kill(): void {
    if (this.running) this.child.kill('SIGKILL');
  }

  /** Every line of standard output, parsed as JSON; throws on a line that is not JSON. */
  logLines(): LogLine[] {
    return parseLogLines(this.stdout);
  }

  /** The one-per-request lines. */
  requestLines(): LogLine[] {
    return this.logLines().filter((line) => line.msg === 'request');
  }
}
