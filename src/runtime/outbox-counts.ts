/** What this instance's deliveries came to, per channel and outcome (`delivered`, `failed`, `dead`), for /metrics. */
export class OutboxCounts {
  readonly #counts = new Map<string, number>();

  count(channel: string, outcome: 'delivered' | 'failed' | 'dead'): void {
    const key = `${channel} ${outcome}`;
    this.#counts.set(key, (this.#counts.get(key) ?? 0) + 1);
  }

  entries(): { channel: string; outcome: string; value: number }[] {
    return [...this.#counts].map(([key, value]) => {
      const [channel = '', outcome = ''] = key.split(' ');
      return { channel, outcome, value };
    });
  }
}
