import { describe, expect, it } from 'vitest';
import { BATCH_AT, TurnBatch } from '../../src/runtime/turn-batch.js';

const nextTurn = () => new Promise((resolve) => setImmediate(resolve));

/** A batch over a table of `rows`, recording the keys of every statement it would run. */
function overRows(rows: Record<string, string>, fail?: (keys: readonly string[]) => boolean) {
  const statements: string[][] = [];
  const batch = new TurnBatch<string, string | undefined>((keys) => {
    statements.push([...keys]);
    if (fail?.(keys) === true) return Promise.reject(new Error('connection lost'));
    return Promise.resolve(keys.map((key) => rows[key]));
  });
  return { batch, statements };
}

describe('items of one turn in one batch', () => {
  it('runs the keys asked for in one turn as one statement, once the turn has asked them all', async () => {
    const { batch, statements } = overRows({ a: 'row a', b: 'row b' });
    const answers = Promise.all([batch.add('a'), batch.add('missing'), batch.add('b')]);
    expect(statements).toEqual([]);
    expect(await answers).toEqual(['row a', undefined, 'row b']);
    expect(statements).toEqual([['a', 'missing', 'b']]);
  });

  it('gives a key asked for twice in one turn the same row', async () => {
    const { batch } = overRows({ a: 'row a' });
    expect(await Promise.all([batch.add('a'), batch.add('a')])).toEqual(['row a', 'row a']);
  });

  it('sends BATCH_AT keys at once and the rest at the end of the turn, each batch its own statement', async () => {
    const rows = Object.fromEntries(Array.from({ length: BATCH_AT + 2 }, (_, i) => [`k${i}`, `row ${i}`]));
    const { batch, statements } = overRows(rows);
    const answers = Object.keys(rows).map((key) => batch.add(key));
    expect(statements).toEqual([Object.keys(rows).slice(0, BATCH_AT)]);
    expect(await Promise.all(answers)).toEqual(Object.values(rows));
    expect(statements).toEqual([Object.keys(rows).slice(0, BATCH_AT), Object.keys(rows).slice(BATCH_AT)]);
  });

  it("fails every lookup of a failing statement, and only that batch's", async () => {
    const { batch } = overRows({ a: 'row a', b: 'row b' }, (keys) => keys.includes('a'));
    const failed = Promise.allSettled([batch.add('a'), batch.add('b')]);
    expect((await failed).map((outcome) => outcome.status)).toEqual(['rejected', 'rejected']);
    await nextTurn();
    expect(await batch.add('b')).toBe('row b');
  });

  it('fails the batch, and not the process, when its statement throws instead of rejecting', async () => {
    const batch = new TurnBatch<string, string>(() => {
      throw new Error('thrown');
    });
    await expect(batch.add('a')).rejects.toThrow('thrown');
  });

  it('fails only the item whose answer is an Error, and every item when the answers do not match the items', async () => {
    const partly = new TurnBatch<string, string>((keys) => keys.map((key) => (key === 'bad' ? new Error(`no ${key}`) : key.toUpperCase())));
    const outcomes = await Promise.allSettled([partly.add('a'), partly.add('bad'), partly.add('c')]);
    expect(outcomes.map((outcome) => (outcome.status === 'fulfilled' ? outcome.value : String(outcome.reason)))).toEqual(['A', 'Error: no bad', 'C']);
    const short = new TurnBatch<string, string>((keys) => keys.slice(1));
    const settled = await Promise.allSettled([short.add('a'), short.add('b')]);
    expect(settled.map((outcome) => outcome.status)).toEqual(['rejected', 'rejected']);
  });
});
