/**
 * The one way tests start the compiled service as a process (`npm run build` first): `node
 * dist/cli/main.js serve`, or another command through `launch()`, with a clean environment, its
 * output collected, stopped by a signal.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { setTimeout as sleep } from 'node:timers/promises';
import { CLI_MAIN, childEnv, isRunning } from './cli-run.js';
import { freePort } from './free-port.js';
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

/** A server started by `serveOnFreePort`, answering on `url`. */
export interface Listening {
  readonly server: ServerProcess;
  readonly port: number;
  readonly url: string;
}

/**
 * Starts `serve` on a free port of 127.0.0.1 (HOST and PORT set here) and resolves once it answers
 * GET /healthz; kills it and rejects with its output when it exits or does not come up in time.
 */
export async function serveOnFreePort(options: StartOptions & { readonly timeoutMs?: number }): Promise<Listening> {
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  const server = ServerProcess.start({ cwd: options.cwd, env: { ...options.env, HOST: '127.0.0.1', PORT: String(port) } });
  try {
    await server.waitHealthy(url, options.timeoutMs);
  } catch (error) {
    server.kill();
    throw error;
  }
  return { server, port, url };
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
