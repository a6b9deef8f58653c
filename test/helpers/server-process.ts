import { spawn, type ChildProcess } from 'node:child_process';
import { createServer } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { CLI_MAIN, childEnv, isRunning } from './cli-run.js';

/** A TCP port nobody listens on right now, on every interface (listen on 0, read it, close). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.unref();
    server.on('error', reject);
    server.listen(0, '0.0.0.0', () => {
      const address = server.address();
      server.close(() => {
        if (address === null || typeof address === 'string') reject(new Error('no port'));
        else resolve(address.port);
      });
    });
  });
}

export interface Exit {
  readonly code: number | null;
  readonly signal: NodeJS.Signals | null;
}

/** A JSON log line of the service (pino). */
export interface LogLine {
  readonly level: number;
  readonly msg: string;
  readonly reqId?: string;
  readonly method?: string;
  readonly route?: string | null;
  readonly status?: number;
  readonly [key: string]: unknown;
}

/** JSON log output, one object a line; throws on a line that is not JSON. */
export function parseLogLines(output: string): LogLine[] {
  return output
    .split('\n')
    .filter((line) => line.trim() !== '')
    .map((line) => {
      try {
        return JSON.parse(line) as LogLine;
      } catch {
        throw new Error(`log line is not JSON: ${line}`);
      }
    });
}

/** `node dist/cli/main.js serve` as a child process, its output collected. */
export class ServerProcess {
  stdout = '';
  stderr = '';
  readonly exited: Promise<Exit>;

  private constructor(readonly child: ChildProcess) {
    child.stdout?.setEncoding('utf8').on('data', (chunk: string) => (this.stdout += chunk));
    child.stderr?.setEncoding('utf8').on('data', (chunk: string) => (this.stderr += chunk));
    this.exited = new Promise((resolve) => child.on('close', (code, signal) => resolve({ code, signal })));
  }

  /** Starts `serve` in `cwd`; `env` is added to a clean environment (undefined removes a variable). */
  static start(options: { cwd: string; env: Record<string, string | undefined> }): ServerProcess {
    return ServerProcess.launch(process.execPath, [CLI_MAIN, 'serve'], options);
  }

  /**
   * Starts the server through another command (`npm start`, `npx school-auth serve`), whose own
   * PID is `child.pid`; `detached` puts it in a process group of its own, as a terminal would.
   */
  static launch(command: string, args: readonly string[], options: { cwd: string; env: Record<string, string | undefined>; detached?: boolean }): ServerProcess {
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

  /** Sends SIGTERM and waits for the exit. */
  async stop(timeoutMs = 20_000): Promise<Exit> {
    if (this.running) this.child.kill('SIGTERM');
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
