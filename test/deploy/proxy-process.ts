import { spawn, type ChildProcess } from 'node:child_process';
import { request } from 'node:https';
import { connect } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';

/** A reverse proxy run by a test, with its output kept for the failure message. */
export class ProxyProcess {
  output = '';
  private constructor(readonly child: ChildProcess) {
    child.stdout?.setEncoding('utf8').on('data', (chunk: string) => (this.output += chunk));
    child.stderr?.setEncoding('utf8').on('data', (chunk: string) => (this.output += chunk));
  }

  static start(command: string, args: readonly string[], env: NodeJS.ProcessEnv = process.env): ProxyProcess {
    return new ProxyProcess(spawn(command, args, { env, stdio: ['ignore', 'pipe', 'pipe'] }));
  }

  /** Resolves once `port` on 127.0.0.1 accepts connections; fails with the output if the proxy exits. */
  async waitListening(port: number, timeoutMs = 20_000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (Date.now() < deadline) {
      if (this.child.exitCode !== null) throw new Error(`the proxy exited (${this.child.exitCode}):\n${this.output}`);
      const open = await new Promise<boolean>((resolve) => {
        const socket = connect(port, '127.0.0.1', () => {
          socket.destroy();
          resolve(true);
        });
        socket.on('error', () => resolve(false));
      });
      if (open) return;
      await sleep(100);
    }
    throw new Error(`the proxy did not listen on ${port} within ${timeoutMs} ms:\n${this.output}`);
  }

  stop(): void {
    if (this.child.exitCode === null && this.child.signalCode === null) this.child.kill('SIGTERM');
  }
}

export interface Answer {
  readonly status: number;
  readonly headers: Record<string, string | string[] | undefined>;
  readonly body: string;
}

/** An HTTPS request to 127.0.0.1:port for auth.school.example (a test certificate: not verified). */
export function httpsRequest(port: number, method: string, path: string, headers: Record<string, string> = {}, body = ''): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = request(
      { host: '127.0.0.1', port, method, path, servername: 'auth.school.example', rejectUnauthorized: false, headers: { host: 'auth.school.example', ...headers } },
      (res) => {
        let text = '';
        res.setEncoding('utf8').on('data', (chunk: string) => (text += chunk));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: text }));
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}
