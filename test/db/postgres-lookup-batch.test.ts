import { describe, expect, it } from 'vitest';
import { LOOKUPS_AT, LookupBatch } from '../../src/db/postgres-lookup-batch.js';

const nextTurn = () => new Promise((resolve) => setImmediate(resolve));

/** A batch over a table of `rows`, recording the keys of every statement it would run. */
function overRows(rows: Record<string, string>, fail?: (keys: readonly string[]) => boolean) {
  const statements: string[][] = [];
  const batch = new LookupBatch<string>((keys) => {
    statements.push([...keys]);
    if (fail?.(keys) === true) return Promise.reject(new Error('connection lost'));
    return Promise.resolve(new Map(keys.filter((key) => key in rows).map((key) => [key, rows[key]!])));
  });
  return { batch, statements };
}

describe('lookups of one turn in one statement', () => {
  it('runs the keys asked for in one turn as one statement, once the turn has asked them all', async () => {
    const { batch, statements } = overRows({ a: 'row a', b: 'row b' });
    const answers = Promise.all([batch.find('a'), batch.find('missing'), batch.find('b')]);
    expect(statements).toEqual([]);
    expect(await answers).toEqual(['row a', undefined, 'row b']);
    expect(statements).toEqual([['a', 'missing', 'b']]);
  });

  it('gives a key asked for twice in one turn the same row', async () => {
    const { batch } = overRows({ a: 'row a' });
    expect(await Promise.all([batch.find('a'), batch.find('a')])).toEqual(['row a', 'row a']);
  });

  it('sends LOOKUPS_AT keys at once and the rest at the end of the turn, each batch its own statement', async () => {
    const rows = Object.fromEntries(Array.from({ length: LOOKUPS_AT + 2 }, (_, i) => [`k${i}`, `row ${i}`]));
    const { batch, statements } = overRows(rows);
    const answers = Object.keys(rows).map((key) => batch.find(key));
    expect(statements).toEqual([Object.keys(rows).slice(0, LOOKUPS_AT)]);
    expect(await Promise.all(answers)).toEqual(Object.values(rows));
    expect(statements).toEqual([Object.keys(rows).slice(0, LOOKUPS_AT), Object.keys(rows).slice(LOOKUPS_AT)]);
  });

  it("fails every lookup of a failing statement, and only that batch's", async () => {
    const { batch } = overRows({ a: 'row a', b: 'row b' }, (keys) => keys.includes('a'));
    const failed = Promise.allSettled([batch.find('a'), batch.find('b')]);
    expect((await failed).map((outcome) => outcome.status)).toEqual(['rejected', 'rejected']);
    await nextTurn();
    expect(await batch.find('b')).toBe('row b');
  });

  it('fails the batch, and not the process, when its statement throws instead of rejecting', async () => {
    const batch = new LookupBatch<string>(() => {
      throw new Error('thrown');
    });
    await expect(batch.find('a')).rejects.toThrow('thrown');
  });
});
