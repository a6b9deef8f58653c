import type { SigningKeyRow } from '../../db/queries/signing-keys.js';

type KeyState = 'pending' | 'active' | 'retiring' | 'retired' | 'revoked';

export interface ScheduledKey {
  readonly row: SigningKeyRow;
  readonly state: KeyState;
  /** When a newer key took over signing (or, for a revoked key, when it was revoked); undefined while none has. */
  readonly supersededAt: number | undefined;
}

/**
 * Where each key stands at `now`: a new key is published (pending) before it signs; the newest
 * key whose activation time has come signs (active); a superseded key stays published (retiring)
 * until every token it could have signed has expired, then it is dropped (retired).
 * A revoked key is withdrawn at once: it never signs and is never published again, whatever its
 * place in the schedule, because whoever leaked it may sign with it.
 * `rows` must be ordered by activation time, oldest first.
 */
export function scheduleKeys(rows: readonly SigningKeyRow[], now: number, maxTokenLifetime: number): ScheduledKey[] {
  const started = rows.filter((row) => row.active_from <= now);
  const active = started.filter((row) => row.revoked_at === null).at(-1);
  return rows.map((row) => {
    if (row.revoked_at !== null) return { row, state: 'revoked', supersededAt: row.revoked_at };
    if (row.active_from > now) return { row, state: 'pending', supersededAt: undefined };
    if (row === active) return { row, state: 'active', supersededAt: undefined };
    const successor = started[started.indexOf(row) + 1];
    const supersededAt = successor?.active_from ?? now;
    const state = supersededAt + maxTokenLifetime > now ? 'retiring' : 'retired';
    return { row, state, supersededAt };
  });
}
