import { mkdtempSync, rmSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { REPO_ROOT } from '../helpers/cli-run.js';
import { freePort } from '../helpers/free-port.js';
import { ServerProcess } from '../helpers/server-process.js';

// What `docker stop` or a process manager does to a service started the README's way: signal the
// PID it started, which is npm's. npm forwards the signal to its child only, so the server has to
// be that child (not a shell around it) and npm has to wait for its drain.

const launched: ServerProcess[] = [];
const directories: string[] = [];

afterEach(() => {
  for (const server of launched.splice(0)) {
    if (server.child.pid !== undefined && server.running) process.kill(server.child.pid, 'SIGKILL');
    const pid = serverPid(server);
    if (pid !== undefined && alive(pid)) process.kill(pid, 'SIGKILL');
  }
  for (const dir of directories.splice(0)) rmSync(dir, { recursive: true, force: true });
});

async function launch(command: 'npm start' | 'npx school-auth serve', detached = false): Promise<{ server: ServerProcess; port: number }> {
  const dataDir = mkdtempSync(join(tmpdir(), 'school-auth-npm-'));
  directories.push(dataDir);
  const port = await freePort();
  const args = command === 'npm start' ? ['start'] : ['school-auth', 'serve'];
  const server = ServerProcess.launch(command === 'npm start' ? 'npm' : 'npx', args, {
    cwd: REPO_ROOT,
    env: { DATA_DIR: dataDir, HOST: '127.0.0.1', PORT: String(port), SHUTDOWN_TIMEOUT: '20' },
    detached,
  });
  launched.push(server);
  await server.waitHealthy(`http://127.0.0.1:${port}`, 60_000);
  return { server, port };
}

/** The server's own PID, from its log lines (npm writes a banner before them). */
function serverPid(server: ServerProcess): number | undefined {
  const line = server.stdout.split('\n').find((text) => text.startsWith('{"level"'));
  return line === undefined ? undefined : (JSON.parse(line) as { pid: number }).pid;
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** A login whose body has only half arrived: a request the server is in the middle of. */
async function startSlowRequest(port: number): Promise<{ finish(): Promise<string> }> {
  const socket = connect(port, '127.0.0.1');
  await new Promise((resolve) => socket.once('connect', resolve));
  let answer = '';
  socket.setEncoding('utf8').on('data', (chunk: string) => (answer += chunk));
  const body = '{"school_id":"x","username":"y"}';
  // `Expect: 100-continue` makes the server say when it has taken the request in hand.
  socket.write(`POST /admin/auth/login HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nExpect: 100-continue\r\nContent-Length: ${body.length}\r\n\r\n`);
  await expect.poll(() => answer, { timeout: 10_000, interval: 5 }).toMatch(/^HTTP\/1\.1 100 Continue\r\n\r\n/);
  answer = '';
  socket.write(body.slice(0, 10));
  const finish = async () => {
    socket.write(body.slice(10));
    await new Promise((resolve) => socket.once('close', resolve));
    return answer;
  };
  return { finish };
}

async function signalAndDrain(server: ServerProcess, port: number, signal: NodeJS.Signals, target: 'npm' | 'group'): Promise<void> {
  // pino writes the log line asynchronously, and it comes on a pipe, the health check's answer on a
  // socket: the answer may be read first.
  await expect.poll(() => serverPid(server), { timeout: 10_000, interval: 20 }).toEqual(expect.any(Number));
  const pid = serverPid(server);
  const inFlight = await startSlowRequest(port);
  const npmPid = server.child.pid as number;
  process.kill(target === 'npm' ? npmPid : -npmPid, signal);
  await expect.poll(() => server.stdout, { timeout: 10_000, interval: 20 }).toContain('shutting down');

  // The request begun before the signal is still answered (422: its body lacks the password).
  expect(await inFlight.finish()).toMatch(/^HTTP\/1\.1 422 /);
  expect(await server.waitExit(20_000)).toEqual({ code: 0, signal: null });
  expect(alive(pid as number)).toBe(false);
  expect(server.stdout).toMatch(new RegExp(`"signal":"${signal}"`));
}

describe('signals through the README start commands', { timeout: 120_000 }, () => {
  it('npm start: SIGTERM to npm drains the in-flight request, npm and the server exit 0', async () => {
    const { server, port } = await launch('npm start');
    await signalAndDrain(server, port, 'SIGTERM', 'npm');
  });

  it('npm start: SIGINT to npm does the same', async () => {
    const { server, port } = await launch('npm start');
    await signalAndDrain(server, port, 'SIGINT', 'npm');
  });

  it('npm start: Ctrl-C (SIGINT to the whole process group, so the server gets it twice) drains and exits 0', async () => {
    const { server, port } = await launch('npm start', true);
    await signalAndDrain(server, port, 'SIGINT', 'group');
  });

  it('npx school-auth serve: SIGTERM to npx drains the in-flight request, both exit 0', async () => {
    const { server, port } = await launch('npx school-auth serve');
    await signalAndDrain(server, port, 'SIGTERM', 'npm');
  });

  it('npx school-auth serve: SIGINT to npx does the same', async () => {
    const { server, port } = await launch('npx school-auth serve');
    await signalAndDrain(server, port, 'SIGINT', 'npm');
  });
});
