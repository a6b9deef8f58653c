import { afterAll, describe, it } from 'vitest';
import { rawRequest, type HttpAnswer } from '../helpers/abuse-http.js';
import { OPS_SCHOOL, OPS_USERNAME, cleanupOps, seedWithCli, sleep, startServer } from '../helpers/ops-server.js';

// The tests run concurrently, each with its own server; leftovers are killed at the end.
afterAll(cleanupOps);

const PASSWORD = 'shutdown test passphrase 9';
const IN_FLIGHT = 10;

function exitWithin<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  return Promise.race([promise, sleep(ms).then(() => Promise.reject(new Error(`${what} did not happen within ${ms} ms`)))]);
}

describe.concurrent('graceful shutdown of the real server', () => {
  it('answers every in-flight login after SIGTERM, refuses new connections, then exits 0', async ({ expect }) => {
    // One hashing thread and a slower hash: the logins queue behind each other, so most of them are
    // still waiting at SIGTERM.
    const server = await startServer({ HASH_CONCURRENCY: '1', ARGON2_ITERATIONS: '6', SHUTDOWN_TIMEOUT: '20', LOGIN_THROTTLE: 'off' });
    await seedWithCli(server, PASSWORD);
    const body = JSON.stringify({ school_id: OPS_SCHOOL, username: OPS_USERNAME, password: PASSWORD });

    const answeredAt: number[] = [];
    const logins: Array<Promise<HttpAnswer>> = [];
    for (let i = 0; i < IN_FLIGHT; i++) {
      logins.push(
        rawRequest(`${server.url}/admin/auth/login`, { method: 'POST', headers: { 'content-type': 'application/json' }, body }).then((answer) => {
          answeredAt.push(Date.now());
          return answer;
        }),
      );
    }
    // SIGTERM only once the server holds every login (answered, or waiting for or in the hasher):
    // a request still on its way would meet a closing server, which is another test's subject.
    const hashing = async () => {
      const text = await (await fetch(`${server.managementUrl}/metrics`)).text();
      const gauge = (name: string) => Number(new RegExp(`^${name}\\{[^}]*\\} (\\d+)$`, 'm').exec(text)?.[1] ?? 0);
      return gauge('school_auth_password_hash_queue_depth') + gauge('school_auth_password_hash_active');
    };
    await expect.poll(async () => answeredAt.length + (await hashing()), { timeout: 10_000, interval: 5 }).toBeGreaterThanOrEqual(IN_FLIGHT);
    const signalledAt = Date.now();
    server.child.kill('SIGTERM');
    await expect.poll(() => server.stdout(), { timeout: 5000, interval: 10 }).toMatch(/SIGTERM/);

    // A new connection now is refused, or answered 503; never served.
    const late = await rawRequest(`${server.url}/healthz`).then(
      (answer) => ({ status: answer.status, error: undefined as string | undefined }),
      (error: NodeJS.ErrnoException) => ({ status: 0, error: error.code ?? error.message }),
    );
    if (late.error === undefined) expect(late.status).toBe(503);
    else expect(['ECONNREFUSED', 'ECONNRESET']).toContain(late.error);

    const answers = await Promise.all(logins);
    for (const answer of answers) {
      expect(answer.status, answer.body).toBe(200);
      expect(JSON.parse(answer.body)).toHaveProperty('access_token');
    }
    // The drain really was exercised: some logins finished only after the signal.
    expect(answeredAt.filter((at) => at > signalledAt).length).toBeGreaterThan(0);

    const exit = await exitWithin(server.exited, 10_000, 'exit after SIGTERM');
    expect(exit).toEqual({ code: 0, signal: null });
    expect(server.stderr()).not.toMatch(/error/i);
  });

  it('exits 0 on SIGINT', async ({ expect }) => {
    const server = await startServer();
    server.child.kill('SIGINT');
    const exit = await exitWithin(server.exited, 10_000, 'exit after SIGINT');
    expect(exit).toEqual({ code: 0, signal: null });
    expect(server.stdout()).toMatch(/SIGINT/);
  });

  it('exits 0 on SIGTERM when idle, with an idle keep-alive connection open', async ({ expect }) => {
    const server = await startServer();
    // A keep-alive connection from a client that went quiet must not hold the process.
    const agentResponse = await fetch(`${server.url}/healthz`, { headers: { connection: 'keep-alive' } });
    expect(agentResponse.status).toBe(200);
    await agentResponse.text();
    server.child.kill('SIGTERM');
    const exit = await exitWithin(server.exited, 5000, 'exit after SIGTERM');
    expect(exit).toEqual({ code: 0, signal: null });
  });
});
