import type { Server } from 'node:http';
import type { Socket } from 'node:net';
import type { Clock } from '../runtime/clock.js';

/** How long an answer may sit unsent before its connection is closed. */
export const STALLED_ANSWER_MS = 60_000;

export interface StalledAnswers {
  /** Looks at every open connection once; runs every second on its own while one is open. */
  sweep(): void;
  stop(): void;
}

interface Stall {
  readonly since: number;
  readonly bytesWritten: number;
  readonly writableLength: number;
}

/**
 * Closes a connection whose answer has not moved for `STALLED_ANSWER_MS`: a client that stops
 * reading (a slow-read attack) would otherwise hold its socket and every answer queued on it for
 * as long as it liked. Node bounds the rest itself: the headers and the whole request
 * (headersTimeout, requestTimeout) and idle keep-alive connections (keepAliveTimeout). A socket
 * idle timeout would also cover this, but Node re-arms it twice per request, a measurable share of
 * the cheapest answers (bench/README.md); this looks at the open connections once a second instead,
 * and only while there is one: a server with no connection runs no timer.
 */
export function closeStalledAnswers(server: Server, clock: Clock): StalledAnswers {
  const stalls = new Map<Socket, Stall | undefined>();
  let timer: NodeJS.Timeout | undefined;
  let stopped = false;
  server.on('connection', (socket: Socket) => {
    stalls.set(socket, undefined);
    if (timer === undefined && !stopped) timer = setInterval(sweep, 1000).unref();
    socket.once('close', () => {
      stalls.delete(socket);
      if (stalls.size > 0) return;
      clearInterval(timer);
      timer = undefined;
    });
  });

  const sweep = (): void => {
    const now = clock.now();
    for (const [socket, stall] of stalls) {
      const { bytesWritten, writableLength } = socket;
      if (writableLength === 0) {
        stalls.set(socket, undefined);
        continue;
      }
      // Any change in what was queued or sent is progress: the stall starts over.
      if (stall === undefined || stall.bytesWritten !== bytesWritten || stall.writableLength !== writableLength) {
        stalls.set(socket, { since: now, bytesWritten, writableLength });
        continue;
      }
      if (now - stall.since >= STALLED_ANSWER_MS) socket.destroy();
    }
  };
  const stop = (): void => {
    stopped = true;
    clearInterval(timer);
    timer = undefined;
  };
  return { sweep, stop };
}
