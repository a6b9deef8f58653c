import { UsageError } from '../errors.js';

/** A bound of `events export`: a sequence number or an instant. */
type EventBound = { readonly seq: number } | { readonly at: number };

const ISO_TIME = /^\d{4}-\d{2}-\d{2}(T\d{2}:\d{2}(:\d{2}(\.\d{1,3})?)?(Z|[+-]\d{2}:\d{2}))?$/;

/** An ISO 8601 date or date-time (with its offset) as epoch milliseconds. */
export function parseInstant(value: string, option: string): number {
  const at = ISO_TIME.test(value) ? Date.parse(value) : Number.NaN;
  if (Number.isNaN(at)) throw new UsageError(`${option} takes an ISO 8601 time such as 2026-01-05 or 2026-01-05T08:00:00Z, not ${JSON.stringify(value)}`);
  return at;
}

/** A sequence number (a whole number from 1) or an ISO 8601 time. */
export function parseBound(value: string, option: string): EventBound {
  if (/^\d{1,15}$/.test(value)) {
    const seq = Number(value);
    if (seq < 1) throw new UsageError(`${option} takes a sequence number from 1, or an ISO 8601 time`);
    return { seq };
  }
  const at = ISO_TIME.test(value) ? Date.parse(value) : Number.NaN;
  if (Number.isNaN(at)) throw new UsageError(`${option} takes a sequence number or an ISO 8601 time such as 2026-01-05T08:00:00Z, not ${JSON.stringify(value)}`);
  return { at };
}

/** `--since` (inclusive) and `--until` (exclusive for a time, inclusive for a seq) as a range of sealed events. */
export function exportRange(since: EventBound, until: EventBound | undefined) {
  return {
    afterSeq: 'seq' in since ? since.seq - 1 : 0,
    fromAt: 'at' in since ? since.at : undefined,
    throughSeq: until !== undefined && 'seq' in until ? until.seq : undefined,
    untilAt: until !== undefined && 'at' in until ? until.at : undefined,
  };
}
