import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { outageReason } from '../../src/db/errors.js';
import { DatabaseOutageWatch } from '../../src/db/outage-watch.js';
import { createLogger } from '../../src/runtime/logger.js';
import { TestClock } from '../helpers/clock.js';
import { parseLogLines } from '../helpers/log-lines.js';

/** A database whose round trips wait until the test settles them, one at a time. */
class HeldDatabase {
  readonly pings: { resolve(): void; reject(error: Error): void }[] = [];

  ping(): Promise<void> {
    return new Promise((resolve, reject) => this.pings.push({ resolve, reject }));
  }

  /** Waits (at most five seconds) for the watch's next round trip. */
  async nextPing(): Promise<{ resolve(): void; reject(error: Error): void }> {
    const seen = this.pings.length;
    for (let waited = 0; this.pings.length === seen; waited += 5) {
      if (waited > 5000) throw new Error('the watch did not try the database again');
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
    return this.pings.at(-1)!;
  }
}

function watchWithLog() {
  const output: string[] = [];
  const sink = new Writable({ write: (chunk: Buffer, _encoding, done) => (output.push(chunk.toString('utf8')), done()) });
  const database = new HeldDatabase();
  const clock = new TestClock();
  const watch = new DatabaseOutageWatch({ database, clock, logger: createLogger('info', sink), probeIntervalMs: 1 });
  return { watch, database, clock, lines: () => parseLogLines(output.join('')) };
}

const refusedConnection = Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED' });
const settle = () => new Promise((resolve) => setImmediate(resolve));

describe('DatabaseOutageWatch', () => {
  it('stays down while the database does not answer, and is back with the first round trip that does', async () => {
    const { watch, database, clock, lines } = watchWithLog();
    watch.refused(refusedConnection);
    clock.advance(5);
    (await database.nextPing()).reject(refusedConnection);
    watch.refused(refusedConnection);
    (await database.nextPing()).reject(refusedConnection);
    expect(watch.up).toBe(false);
    expect(lines().map((line) => line.msg)).toEqual(['database unavailable since 2026-01-05T08:00:00.000Z: connect ECONNREFUSED 127.0.0.1:5432']);

    clock.advance(2.4);
    (await database.nextPing()).resolve();
    await settle();
    expect(watch.up).toBe(true);
    expect(lines().map((line) => [line.level, line.msg])).toEqual([
      [50, 'database unavailable since 2026-01-05T08:00:00.000Z: connect ECONNREFUSED 127.0.0.1:5432'],
      [40, 'database back after 7 s; 2 requests refused meanwhile'],
    ]);
  });

  it('logs nothing more once stopped, even when a round trip in flight then answers', async () => {
    const { watch, database, lines } = watchWithLog();
    watch.refused(refusedConnection);
    const inFlight = await database.nextPing();
    watch.stop();
    inFlight.resolve();
    await settle();
    expect(lines()).toHaveLength(1);
    expect(database.pings).toHaveLength(1);
  });
});

describe('outageReason', () => {
  it('is one line: the message, with the code when the message does not name it', () => {
    const terminated = Object.assign(new Error('terminating connection due to administrator command'), { code: '57P01' });
    expect(outageReason(terminated)).toBe('terminating connection due to administrator command (57P01)');
    expect(outageReason(refusedConnection)).toBe('connect ECONNREFUSED 127.0.0.1:5432');
    expect(outageReason(new Error('Connection terminated unexpectedly\n    at somewhere'))).toBe('Connection terminated unexpectedly');
  });

  it('reads the first address tried when Node reports them in an AggregateError with no message', () => {
    const both = Object.assign(new AggregateError([new Error('connect ECONNREFUSED ::1:5432'), new Error('connect ECONNREFUSED 127.0.0.1:5432')], ''), {
      code: 'ECONNREFUSED',
    });
    expect(outageReason(both)).toBe('connect ECONNREFUSED ::1:5432');
  });
});
