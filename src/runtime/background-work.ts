import type { Logger } from './logger.js';

/**
 * Work that runs after the request that asked for it has been answered, so the answer's time
 * says nothing of it: at most `limit` tasks at once; beyond, a task is not run (what asked for
 * it can ask again). A failed task is logged, never thrown.
 */
export class BackgroundWork {
  #running = 0;
  readonly #waiters: (() => void)[] = [];

  constructor(
    private readonly limit: number,
    private readonly logger: Logger,
  ) {}

  /** Starts `task` after the current turn; false when `limit` tasks are already running. */
  run(name: string, task: () => Promise<void>): boolean {
    if (this.#running >= this.limit) {
      this.logger.warn({ task: name }, 'background work full: a task was not run');
      return false;
    }
    this.#running += 1;
    setImmediate(() => {
      task()
        .catch((error: unknown) => this.logger.error({ err: error, task: name }, 'background task failed'))
        .finally(() => {
          this.#running -= 1;
          if (this.#running === 0) this.#waiters.splice(0).forEach((wake) => wake());
        });
    });
    return true;
  }

  /** Resolves once nothing runs (shutdown, tests). */
  idle(): Promise<void> {
    if (this.#running === 0) return Promise.resolve();
    return new Promise((resolve) => this.#waiters.push(resolve));
  }
}
