import { executionAsyncResource } from 'node:async_hooks';

/**
 * One of Node's own `process.nextTick` objects, held for the life of the process.
 *
 * Every request schedules half a dozen ticks inside Node (stream ends, writes, the answer's
 * close), and `nextTick` builds each as an object literal with computed keys. V8 remembers the
 * hidden class (map) each property of that literal was added to, and at the first different map
 * it gives up on that property for good: from then on every tick of the process is built through
 * V8's runtime, several times slower. Those maps live only as long as some tick object does. A
 * full garbage collection at a moment when no tick is pending frees them, the next tick builds new
 * ones, and the literal never recovers; whether that happened depended on when a collection ran
 * during start-up (bench/README.md, its ledger). A tick object held here keeps the maps
 * alive, so the literal keeps the one it started with.
 */
let held: object | undefined;

/** Holds the object of the next tick. Called once as the server starts. */
export function holdTickObjectShape(): void {
  process.nextTick(() => {
    held = executionAsyncResource();
  });
}

/** The tick object held, once its tick has run (for tests). */
export function heldTickObject(): object | undefined {
  return held;
}
