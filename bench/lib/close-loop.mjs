// A small closed-loop HTTP/1.1 load generator on raw sockets, for answers that close the
// connection (`Connection: close`, as Fastify sends with every body-parser error: the 422).
//
// Why not autocannon there: autocannon writes the next request on the socket as soon as a
// response is complete; when the server then closes that socket the request is lost, but its
// entry stays in autocannon's pipeline queue, so every later response is timed from an older
// request. Measured: 1 connection, 443 answers/s, yet "p50 538 ms". Here each request waits for
// its own answer, and a closed connection is replaced before the next request: the time to open
// the new connection is counted in the latency, as a real client would pay it.
import { Buffer } from 'node:buffer';
import { connect } from 'node:net';
import { performance } from 'node:perf_hooks';

function percentile(sorted, p) {
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)];
}

function open(port) {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1');
    socket.setNoDelay(true);
    socket.once('connect', () => resolve(socket));
    socket.once('error', reject);
  });
}

/** Sends `request` (a Buffer) on `socket` and resolves with { status, close } of the answer. */
function exchange(socket, request) {
  return new Promise((resolve, reject) => {
    let buffer = Buffer.alloc(0);
    let head;
    const done = (error, value) => {
      socket.off('data', onData);
      socket.off('error', onError);
      socket.off('end', onEnd);
      if (error) reject(error);
      else resolve(value);
    };
    const onError = (error) => done(error);
    const onEnd = () => done(new Error('connection closed before the answer'));
    const onData = (chunk) => {
      buffer = buffer.length === 0 ? chunk : Buffer.concat([buffer, chunk]);
      if (head === undefined) {
        const end = buffer.indexOf('\r\n\r\n');
        if (end === -1) return;
        const text = buffer.subarray(0, end).toString('latin1');
        head = {
          end: end + 4,
          status: Number(text.slice(9, 12)),
          length: Number(/\r\ncontent-length:\s*(\d+)/i.exec(text)?.[1] ?? 0),
          close: /\r\nconnection:\s*close/i.test(text),
        };
      }
      if (buffer.length >= head.end + head.length) done(undefined, head);
    };
    socket.on('data', onData);
    socket.once('error', onError);
    socket.once('end', onEnd);
    socket.write(request);
  });
}

export async function closeLoop({ port, connections, duration, warmup, request, expected = [200] }) {
  const run = async (seconds, latencies) => {
    const stats = { statuses: {}, socketErrors: 0, reconnects: 0 };
    const end = performance.now() + seconds * 1000;
    await Promise.all(
      Array.from({ length: connections }, async () => {
        let socket;
        while (performance.now() < end) {
          const start = performance.now();
          try {
            if (socket === undefined || socket.destroyed) {
              socket = await open(port);
              stats.reconnects += 1;
            }
            const answer = await exchange(socket, request);
            latencies?.push(performance.now() - start);
            stats.statuses[answer.status] = (stats.statuses[answer.status] ?? 0) + 1;
            if (answer.close) {
              socket.destroy();
              socket = undefined;
            }
          } catch {
            stats.socketErrors += 1;
            socket?.destroy();
            socket = undefined;
          }
        }
        socket?.destroy();
      }),
    );
    return stats;
  };
  if (warmup > 0) await run(warmup);
  const latencies = [];
  const start = performance.now();
  const stats = await run(duration, latencies);
  const seconds = (performance.now() - start) / 1000;
  latencies.sort((a, b) => a - b);
  const responses = Object.values(stats.statuses).reduce((sum, n) => sum + n, 0);
  const ok = Object.entries(stats.statuses)
    .filter(([code]) => expected.includes(Number(code)))
    .reduce((sum, [, n]) => sum + n, 0);
  return {
    rps: ok / seconds,
    p50: percentile(latencies, 50),
    p99: percentile(latencies, 99),
    max: latencies.at(-1),
    errors: responses - ok + stats.socketErrors,
    unexpected_responses: responses - ok,
    socket_errors: stats.socketErrors,
    responses,
    seconds,
    statuses: stats.statuses,
    new_connections: stats.reconnects,
    load_generator: 'raw sockets (bench/lib/close-loop.mjs)',
  };
}

/** The raw bytes of a POST with a JSON body. */
export function postRequest(port, path, body) {
  const bytes = Buffer.from(body);
  return Buffer.concat([
    Buffer.from(`POST ${path} HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nContent-Type: application/json\r\nContent-Length: ${bytes.length}\r\n\r\n`),
    bytes,
  ]);
}
