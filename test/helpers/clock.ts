import type { Clock } from '../../src/runtime/clock.js';

/** A clock that only moves when a test says so. Starts at a fixed instant. */
export class TestClock implements Clock {
  constructor(private ms = Date.UTC(2026, 0, 5, 8, 0, 0)) {}

  now(): number {
    return this.ms;
  }

  advance(seconds: number): void {
    this.ms += seconds * 1000;
  }
}
