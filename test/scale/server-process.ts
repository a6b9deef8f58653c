import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { CLI_MAIN as CLI } from '../helpers/cli-run.js';
import { freePort } from '../helpers/server-process.js';

export { REPO_ROOT as REPO } from '../helpers/cli-run.js';
export { freePort };

/** Runs a `school-auth` command to completion; throws with its stderr when it fails. */
export function cli(args: string[], env: Record<string, string>, input?: string): string {
  const result = spawnSync(process.execPath, [CLI, ...args], { env: { ...process.env, ...env }, input, encoding: 'utf8' });
  if (result.status !== 0) throw new Error(`school-auth ${args.join(' ')} failed (${result.status}): ${result.stderr}`);
  return result.stdout;
}

export interface ServerProcess {
  readonly url: string;
  readonly child: ChildProcess;
  readonly output: () => string;
  stop(): Promise<void>;
}

/** Starts `school-auth serve` and waits until /healthz answers. */
export async function startServer(env: Record<string, string>): Promise<ServerProcess> {
  const port = await freePort();
  const child = spawn(process.execPath, [CLI, 'serve'], {
    env: { ...process.env, HOST: '127.0.0.1', PORT: String(port), MANAGEMENT_PORT: '0', LOG_LEVEL: 'warn', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout?.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr?.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const url = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + 20_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`server exited with ${child.exitCode}: ${output}`);
    const up = await fetch(`${url}/healthz`).then((r) => r.ok, () => false);
    if (up) break;
    if (Date.now() > deadline) throw new Error(`server did not start: ${output}`);
    await new Promise((r) => setTimeout(r, 100));
  }
  return {
    url,
    child,
    output: () => output,
    stop: async () => {
      if (child.exitCode !== null || child.signalCode !== null) return;
      child.kill('SIGTERM');
      await once(child, 'exit');
    },
  };
}

export async function post(url: string, body: unknown): Promise<{ status: number; body: Record<string, unknown> | undefined }> {
  const response = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  const text = await response.text();
  return { status: response.status, body: text === '' ? undefined : (JSON.parse(text) as Record<string, unknown>) };
}
