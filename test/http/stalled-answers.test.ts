/**
 * Connections whose answer the client stopped reading are closed after STALLED_ANSWER_MS, on real
 * sockets (the stall is the kernel's buffers filling up) and an injected clock.
 */
import { once } from 'node:events';
import { createServer, type Server } from 'node:http';
import { connect, type AddressInfo, type Socket } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { closeStalledAnswers, STALLED_ANSWER_MS, type StalledAnswers } from '../../src/http/stalled-answers.js';
import { TestClock } from '../helpers/clock.js';

const BIG = Buffer.alloc(4 * 1024 * 1024, 'a');
const cleanup: (() => void)[] = [];

afterEach(() => {
  for (const step of cleanup.splice(0)) step();
});

interface Setup {
  readonly clock: TestClock;
  readonly stalled: StalledAnswers;
  /** The server's side of the client's connection. */
  readonly serverSide: Socket;
  readonly client: Socket;
}

/** A server answering 4 MB to every request, and one client connected to it. */
async function connected(): Promise<Setup> {
  const server: Server = createServer((_request, response) => {
    response.writeHead(200, { 'content-length': BIG.length });
    response.end(BIG);
  });
  const clock = new TestClock();
  const stalled = closeStalledAnswers(server, clock);
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const accepted = once(server, 'connection') as Promise<[Socket]>;
  const client = connect((server.address() as AddressInfo).port, '127.0.0.1');
  const [serverSide] = await accepted;
  cleanup.push(() => {
    stalled.stop();
    client.destroy();
    server.closeAllConnections();
    server.close();
  });
  return { clock, stalled, serverSide, client };
}

/** Asks for several big answers and reads none of them, until the server cannot send more. */
async function stall({ client, serverSide }: Setup): Promise<void> {
  client.pause();
  client.write('GET / HTTP/1.1\r\nHost: x\r\n\r\n'.repeat(8));
  const deadline = Date.now() + 10_000;
  while (serverSide.writableLength === 0 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 10));
  expect(serverSide.writableLength).toBeGreaterThan(0);
}

describe('stalled answers', () => {
  it('closes a connection whose answer has not moved for STALLED_ANSWER_MS, and not sooner', async () => {
    const setup = await connected();
    await stall(setup);
    setup.stalled.sweep();
    setup.clock.advance(STALLED_ANSWER_MS / 1000 - 1);
    setup.stalled.sweep();
    expect(setup.serverSide.destroyed).toBe(false);

    const closed = once(setup.client, 'close');
    setup.clock.advance(1);
    setup.stalled.sweep();
    expect(setup.serverSide.destroyed).toBe(true);
    // The client sees the end once it reads what the kernel still held for it.
    setup.client.resume();
    await closed;
  });

  it('starts counting again whenever the client reads some of the answer', async () => {
    const setup = await connected();
    await stall(setup);
    setup.stalled.sweep();
    setup.clock.advance(STALLED_ANSWER_MS / 1000 - 1);
    const before = setup.serverSide.writableLength;
    // Read for a moment, then stop again: the server sends more, so the answer has moved.
    setup.client.resume();
    while (setup.serverSide.writableLength === before) await new Promise((resolve) => setImmediate(resolve));
    setup.client.pause();
    setup.stalled.sweep();
    setup.clock.advance(STALLED_ANSWER_MS / 1000 - 1);
    setup.stalled.sweep();
    expect(setup.serverSide.destroyed).toBe(false);
  });

  it('leaves idle connections alone, however long (keep-alive timeouts are Node’s)', async () => {
    const setup = await connected();
    setup.client.write('GET / HTTP/1.1\r\nHost: x\r\n\r\n');
    let received = 0;
    setup.client.on('data', (chunk: Buffer) => (received += chunk.length));
    while (received < BIG.length || setup.serverSide.writableLength > 0) await new Promise((resolve) => setImmediate(resolve));
    expect(setup.serverSide.writableLength).toBe(0);
    for (let i = 0; i < 3; i += 1) {
      setup.stalled.sweep();
      setup.clock.advance(STALLED_ANSWER_MS / 1000);
    }
    setup.stalled.sweep();
    expect(setup.serverSide.destroyed).toBe(false);
  });
});
