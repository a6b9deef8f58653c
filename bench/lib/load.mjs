// Load generation with autocannon (programmatic API) and the numbers we keep from it.
import autocannon from 'autocannon';

/** Instances running now, so Ctrl-C can stop them. */
const running = new Set();

export function stopLoad() {
  for (const instance of running) instance.stop();
}

function cannon(options) {
  return new Promise((resolve, reject) => {
    const instance = autocannon({ timeout: 10, ...options }, (error, result) => {
      running.delete(instance);
      if (error) reject(error);
      else resolve(result);
    });
    running.add(instance);
  });
}

/**
 * One scenario: `target(phase)` returns the autocannon options for 'warmup' or 'measure' (url,
 * connections, requests, setupClient...). Runs the warm-up (thrown away), then the measurement.
 * `expected` lists the status codes that count as success. `settle()` runs between the two: the
 * server keeps working on requests whose connections autocannon dropped at the end of the warm-up.
 */
export async function measure({ target, duration, warmup, expected = [200], settle }) {
  if (warmup > 0) await cannon({ ...target('warmup'), duration: warmup });
  const settled = await settle?.();
  return { ...summarize(await cannon({ ...target('measure'), duration }), expected), ...settled };
}

/** Several loads at once (the login storm): the same warm-up, then the same measured window. */
export async function measureTogether({ targets, duration, warmup, settle }) {
  if (warmup > 0) await Promise.all(targets.map((t) => cannon({ ...t.target('warmup'), duration: warmup })));
  const settled = await settle?.();
  const results = await Promise.all(targets.map((t) => cannon({ ...t.target('measure'), duration })));
  return results.map((result, i) => ({ ...summarize(result, targets[i].expected ?? [200]), ...settled }));
}

export function summarize(result, expected) {
  const statuses = Object.fromEntries(Object.entries(result.statusCodeStats ?? {}).map(([code, { count }]) => [code, count]));
  const responses = Object.values(statuses).reduce((sum, n) => sum + n, 0);
  const ok = Object.entries(statuses)
    .filter(([code]) => expected.includes(Number(code)))
    .reduce((sum, [, n]) => sum + n, 0);
  const seconds = result.duration;
  return {
    rps: ok / seconds,
    p50: result.latency.p50,
    p99: result.latency.p99,
    max: result.latency.max,
    errors: responses - ok + result.errors,
    unexpected_responses: responses - ok,
    socket_errors: result.errors,
    timeouts: result.timeouts,
    responses,
    seconds,
    statuses,
  };
}

export const json = { 'content-type': 'application/json' };

/**
 * Per-connection request sequences. autocannon resets a connection's `context` each time it loops
 * over `requests` (every request, with a single-entry list), so state that must survive from one
 * request to the next (a rotating refresh token) lives in a closure made per connection in
 * setupClient, which installs that connection's own request list.
 */
export function perConnection(makeRequests) {
  let next = 0;
  return (client) => client.setRequests(makeRequests(next++));
}
