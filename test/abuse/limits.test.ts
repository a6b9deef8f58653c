/**
 * Resource limits through a real socket: body size (413 before the body is read), slow bodies,
 * deep JSON, and the bounded password-hashing queue (503 with Retry-After, never 500).
 */
import { once } from 'node:events';
import { connect, type Socket } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { listEvents } from '../../src/db/queries/events.js';
import { createTestApp, seedAdmin, type TestApp } from '../helpers/app.js';
import { TEST_DIALECTS } from '../helpers/database.js';
import { postJsonTo, rawExchange, send, type HttpAnswer } from '../helpers/abuse-http.js';
import { LOGIN, REFUSED_BODY, UNAVAILABLE_BODY } from '../helpers/abuse-login.js';

const TOO_LARGE = '{"detail":"Request body too large"}';
const UNPARSABLE = '{"detail":"There was an error parsing the body"}';

const opened: TestApp[] = [];
const sockets: Socket[] = [];

/** The real application listening on 127.0.0.1 and a free port. */
async function listening(env: Record<string, string> = {}, dialect: 'sqlite' | 'postgres' = 'sqlite'): Promise<{ t: TestApp; port: number }> {
  const t = await createTestApp(env, dialect);
  opened.push(t);
  await t.app.listen({ port: 0, host: '127.0.0.1' });
  const address = t.app.server.address();
  if (address === null || typeof address === 'string') throw new Error('not listening on TCP');
  return { t, port: address.port };
}

afterEach(async () => {
  for (const socket of sockets.splice(0)) socket.destroy();
  await Promise.all(opened.splice(0).map((t) => t.close()));
});

function head(path: string, headers: Record<string, string | number>): string {
  const lines = Object.entries(headers).map(([name, value]) => `${name}: ${value}`);
  return [`POST ${path} HTTP/1.1`, 'Host: 127.0.0.1', ...lines, '', ''].join('\r\n');
}

function loginOf(admin: { schoolId: string; username: string; password: string }) {
  return { school_id: admin.schoolId, username: admin.username, password: admin.password };
}

describe('body size', () => {
  it('answers 413 at once to a 10 MB Content-Length, without waiting for the body', async () => {
    const { port } = await listening();
    const response = await rawExchange(port, (socket) => {
      sockets.push(socket);
      // Headers and a few bytes; the socket stays open, the rest never comes.
      socket.write(head(LOGIN, { 'Content-Type': 'application/json', 'Content-Length': 10 * 1024 * 1024 }));
      socket.write('{"school_id": "x"');
    }, 5000);
    expect(response.status).toBe(413);
    expect(response.body).toBe(TOO_LARGE);
    expect(response.elapsedMs).toBeLessThan(2000);
    // Above 1 MiB the body is not worth reading: the connection closes instead.
    expect(response.head).toMatch(/^connection: close/im);
  });

  it('answers 413 to a declared body of up to 1 MiB, then reads and discards it: a proxy relaying it gets the answer, the connection stays usable', async () => {
    const { port } = await listening();
    const socket = connect(port, '127.0.0.1');
    sockets.push(socket);
    await once(socket, 'connect');
    let received = '';
    let failure: Error | undefined;
    socket.setEncoding('utf8');
    socket.on('data', (chunk: string) => (received += chunk));
    socket.on('error', (error) => (failure = error));
    const arrived = (pattern: RegExp) =>
      new Promise<void>((resolve, reject) => {
        const check = () => {
          if (pattern.test(received)) return resolve();
          if (failure !== undefined || socket.destroyed) return reject(new Error(`connection ended: ${failure?.message ?? 'closed'}; received ${JSON.stringify(received)}`));
          setTimeout(check, 10);
        };
        check();
      });
    const body = `"${'x'.repeat(20_000)}"`;
    socket.write(head(LOGIN, { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(body) }));
    await arrived(/Request body too large/);
    // The body arrives after the answer, as it does from a proxy still relaying it; then the
    // next request on the same connection.
    socket.write(body);
    socket.write('GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n');
    await arrived(/HTTP\/1\.1 200/);
    expect(received).toMatch(/^HTTP\/1\.1 413/);
    expect(received).not.toMatch(/^connection: close/im);
    expect(failure).toBeUndefined();
  });

  it('answers 413 to a chunked body once it exceeds the limit', async () => {
    const { port } = await listening();
    const chunk = Buffer.alloc(4096, 'a');
    let sent = 0;
    const response = await rawExchange(port, (socket) => {
      sockets.push(socket);
      socket.write(head(LOGIN, { 'Content-Type': 'application/json', 'Transfer-Encoding': 'chunked' }));
      socket.write('f\r\n{"school_id": "\r\n');
      // Keep sending 4 KiB chunks (up to 1 MiB), 20 ms apart, until the server answers; never the
      // last chunk. The pause lets its answer be read before our next write meets a closed socket.
      let answered = false;
      socket.once('data', () => (answered = true));
      const pump = () => {
        if (answered || socket.destroyed || sent >= 256) return;
        sent += 1;
        socket.write(`${chunk.length.toString(16)}\r\n`);
        socket.write(chunk);
        socket.write('\r\n', () => setTimeout(pump, 20));
      };
      pump();
    }, 5000);
    expect(response.status).toBe(413);
    expect(response.body).toBe(TOO_LARGE);
    expect(sent, 'the server answered long before 1 MiB').toBeLessThan(64);
  });

  it('accepts a chunked body within the limit, and draws the line at exactly BODY_LIMIT bytes', async () => {
    const { t, port } = await listening();
    const admin = await seedAdmin(t.services);
    const chunked = await rawExchange(port, (socket) => {
      sockets.push(socket);
      const body = JSON.stringify(loginOf(admin));
      socket.write(head(LOGIN, { 'Content-Type': 'application/json', 'Transfer-Encoding': 'chunked' }));
      for (const part of [body.slice(0, 10), body.slice(10)]) socket.write(`${Buffer.byteLength(part).toString(16)}\r\n${part}\r\n`);
      socket.write('0\r\n\r\n');
    });
    expect(chunked.status).toBe(200);

    expect(t.config.bodyLimit).toBe(16_384);
    const padded = (size: number) => {
      const base = JSON.stringify({ ...loginOf(admin), password: 'wrong', pad: '' });
      return base.replace('"pad":""', `"pad":"${'p'.repeat(size - Buffer.byteLength(base))}"`);
    };
    expect(Buffer.byteLength(padded(16_384))).toBe(16_384);
    const atLimit = await postJsonTo(port, LOGIN, padded(16_384));
    expect(atLimit.status).toBe(401);
    expect(atLimit.body).toBe(REFUSED_BODY);
    const overLimit = await postJsonTo(port, LOGIN, padded(16_385));
    expect(overLimit.status).toBe(413);
    expect(overLimit.body).toBe(TOO_LARGE);
  });

  it('answers 400 to JSON nested too deep, and 422 to the same text when it is not JSON', async () => {
    const { port } = await listening();
    const deep = `${'['.repeat(8000)}${']'.repeat(8000)}`;
    const json = await postJsonTo(port, LOGIN, deep);
    expect(json.status).toBe(400);
    expect(json.body).toBe(UNPARSABLE);
    const text = await send(port, LOGIN, { method: 'POST', headers: { 'content-type': 'text/plain' }, body: deep });
    expect(text.status).toBe(422);
    expect((await send(port, '/healthz')).status).toBe(200);
  });
});

describe('protocol errors', () => {
  // Node's parser refuses these before any route runs; Fastify's default clientError handler then
  // writes its own body. Every error body is JSON with a `detail` member (docs/api.md).
  it.each<[string, string, number]>([
    ['bad chunk framing', `${head(LOGIN, { 'Content-Type': 'application/json', 'Transfer-Encoding': 'chunked' })}zz\r\n{}\r\n0\r\n\r\n`, 400],
    ['a header line without a colon', 'POST /admin/auth/login HTTP/1.1\r\nHost: x\r\nthis is not a header\r\n\r\n', 400],
    ['headers over 16 KiB', `GET /healthz HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(20_000)}\r\n\r\n`, 431],
  ])('answers %s with a documented JSON error body', async (_name, bytes, status) => {
    const { port } = await listening();
    const response = await rawExchange(port, (socket) => {
      sockets.push(socket);
      socket.write(bytes);
    });
    expect(response.status).toBe(status);
    expect(Object.keys(JSON.parse(response.body) as object), response.body).toEqual(['detail']);
    expect((await send(port, '/healthz')).status).toBe(200);
  });
});

describe('slow readers', () => {
  it('closes a connection whose client stops reading its answers, once they have not moved for a minute', async () => {
    const { t, port } = await listening();
    const accepted = once(t.app.server, 'connection') as Promise<[Socket]>;
    const client = connect(port, '127.0.0.1');
    sockets.push(client);
    const [serverSide] = await accepted;
    // Pipelined requests whose answers are never read, until the kernel's buffers are full.
    client.pause();
    client.write('GET /openapi.json HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n'.repeat(2000));
    const deadline = Date.now() + 10_000;
    while (serverSide.writableLength === 0 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 20));
    expect(serverSide.writableLength).toBeGreaterThan(0);
    expect(serverSide.destroyed).toBe(false);
    // The check runs every second; the minute passes on the test's clock.
    while (!serverSide.destroyed && Date.now() < deadline) {
      t.clock.advance(60);
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
    expect(serverSide.destroyed).toBe(true);
  });
});

describe('slow bodies', () => {
  it('keep serving other clients while 30 connections trickle bodies that never finish', async () => {
    const { t, port } = await listening();
    const admin = await seedAdmin(t.services);
    const answered: number[] = [];
    const slow = Array.from({ length: 30 }, () =>
      rawExchange(
        port,
        (socket) => {
          sockets.push(socket);
          socket.write(head(LOGIN, { 'Content-Type': 'application/json', 'Content-Length': 1000 }));
          socket.write('{"school_id"');
        },
        60_000,
      ).then(
        (response) => answered.push(response.status),
        () => answered.push(-1),
      ),
    );
    void slow;
    await new Promise((resolve) => setImmediate(resolve));
    const started = performance.now();
    const results: HttpAnswer[] = await Promise.all([
      send(port, '/healthz'),
      send(port, '/readyz'),
      postJsonTo(port, LOGIN, loginOf(admin)),
      postJsonTo(port, LOGIN, { ...loginOf(admin), password: 'wrong password' }),
      postJsonTo(port, '/auth/refresh', { refresh_token: 'nope' }),
    ]);
    expect(results.map((result) => result.status)).toEqual([200, 200, 200, 401, 401]);
    expect(performance.now() - started).toBeLessThan(5000);
    // The slow requests are still pending: nothing answered them in the meantime.
    expect(answered).toEqual([]);
    // What bounds them: Node's requestTimeout (the whole request, REQUEST_TIMEOUT).
    expect(t.app.server.requestTimeout).toBeGreaterThan(0);
    expect(t.app.server.requestTimeout).toBeLessThanOrEqual(60_000);
  });

  it('bounds a whole request by REQUEST_TIMEOUT, the headers by at most 10 s', async () => {
    const { t } = await listening();
    const server = t.app.server;
    expect(server.requestTimeout).toBe(30_000);
    expect(server.headersTimeout).toBeLessThanOrEqual(server.requestTimeout);
  });

  it('drops a request whose body never finishes after REQUEST_TIMEOUT, with a documented error body', async () => {
    const { port } = await listening({ REQUEST_TIMEOUT: '2' });
    const started = Date.now();
    const response = await rawExchange(
      port,
      (socket) => {
        sockets.push(socket);
        socket.write(head(LOGIN, { 'Content-Type': 'application/json', 'Content-Length': 1000 }));
        // A byte every 200 ms: never idle, never finished.
        const drip = setInterval(() => (socket.destroyed ? clearInterval(drip) : socket.write(' ')), 200);
        socket.on('close', () => clearInterval(drip));
      },
      15_000,
    );
    expect(response.status).toBe(408);
    expect(JSON.parse(response.body)).toEqual({ detail: 'Request Timeout' });
    // REQUEST_TIMEOUT, plus at most the one-second check interval and some scheduling slack.
    expect(Date.now() - started).toBeLessThan(6000);
  });
});

describe.each(TEST_DIALECTS)('hash queue on %s', (dialect) => {
  const env = { HASH_CONCURRENCY: '1', HASH_QUEUE_LIMIT: '2' };

  it('answers 503 with Retry-After beyond HASH_CONCURRENCY + HASH_QUEUE_LIMIT, never 500, and recovers', async () => {
    const { t, port } = await listening({ ...env, LOGIN_THROTTLE: 'off' }, dialect);
    const admin = await seedAdmin(t.services);
    const bodies = Array.from({ length: 20 }, (_, i) => (i % 2 === 0 ? loginOf(admin) : { ...loginOf(admin), password: `wrong ${i}` }));
    const answers = await Promise.all(bodies.map((body) => postJsonTo(port, LOGIN, body)));
    const statuses = answers.map((answer) => answer.status);
    const unavailable = answers.filter((answer) => answer.status === 503);
    expect(unavailable.length, `statuses: ${statuses.join(',')}`).toBeGreaterThan(0);
    expect(answers.length - unavailable.length, 'at least the running and queued logins are served').toBeGreaterThanOrEqual(3);
    for (const answer of unavailable) {
      expect(answer.body).toBe(UNAVAILABLE_BODY);
      expect(String(answer.headers['retry-after'])).toMatch(/^[1-9]\d*$/);
    }
    answers.forEach((answer, i) => {
      if (answer.status !== 503) expect(answer.status, `login ${i}`).toBe(i % 2 === 0 ? 200 : 401);
    });
    expect(t.services.hasher.queue.active).toBe(0);
    expect(t.services.hasher.queue.depth).toBe(0);
    // The process is fine afterwards.
    expect((await postJsonTo(port, LOGIN, loginOf(admin))).status).toBe(200);
    expect((await send(port, '/healthz')).status).toBe(200);
    expect((await send(port, '/readyz')).status).toBe(200);
  });

  it('does not count a 503 as a failed login', async () => {
    const { t, port } = await listening(env, dialect);
    const admin = await seedAdmin(t.services);
    // Different usernames: no throttling layer can apply to 20 first attempts from one IP.
    const answers = await Promise.all(Array.from({ length: 20 }, (_, i) => postJsonTo(port, LOGIN, { ...loginOf(admin), username: `user-${i}` })));
    const statuses = answers.map((answer) => answer.status);
    expect(statuses.filter((status) => status !== 401 && status !== 503), statuses.join(',')).toEqual([]);
    expect(statuses.filter((status) => status === 503).length).toBeGreaterThan(0);
    const failures = (await listEvents(t.services.db, { limit: 1000 })).filter((event) => event.type === 'login.failure');
    expect(failures.length).toBe(statuses.filter((status) => status === 401).length);
    // Only those failures count against the IP's 20-failure window.
    expect((await postJsonTo(port, LOGIN, loginOf(admin))).status).toBe(200);
  });
});
