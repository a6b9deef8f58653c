import { AppError } from '../../errors.js';

/**
 * Runs at most `concurrency` jobs at once and holds at most `limit` waiting; past that it refuses
 * at once (503) instead of letting a login storm pile up memory and latency.
 */
export class WorkQueue {
  private running = 0;
  private readonly waiting: (() => void)[] = [];

  constructor(
    private readonly concurrency: number,
    private readonly limit: number,
  ) {}

  get depth(): number {
    return this.waiting.length;
  }

  get active(): number {
    return this.running;
  }

  async run<T>(job: () => Promise<T>): Promise<T> {
    if (this.running >= this.concurrency) {
      if (this.waiting.length >= this.limit) throw new AppError('UNAVAILABLE');
      await new Promise<void>((resolve) => this.waiting.push(resolve));
    } else {
      this.running += 1;
    }
    try {
      return await job();
    } finally {
      this.release();
    }
  }

  /** Hands the slot straight to the next waiter, so `running` never exceeds `concurrency`. */
  private release(): void {
    const next = this.waiting.shift();
    if (next === undefined) this.running -= 1;
    else next();
  }
}
