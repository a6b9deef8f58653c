// Paired, alternating runs of two builds, for the A/B scripts in bench/ (in-process, sockets, wrk).

export function median(values) {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2;
}

/**
 * Runs A and B `pairs` times, B first in every other pair, so that a cost of running second
 * favours neither side; calls `report(pair, bFirst, a, b)` after each pair and returns the pairs.
 */
export async function alternate(pairs, runA, runB, report) {
  const results = [];
  for (let pair = 1; pair <= pairs; pair += 1) {
    const bFirst = pair % 2 === 0;
    const first = await (bFirst ? runB : runA)();
    const second = await (bFirst ? runA : runB)();
    const [a, b] = bFirst ? [second, first] : [first, second];
    report(pair, bFirst, a, b);
    results.push({ a, b });
  }
  return results;
}
