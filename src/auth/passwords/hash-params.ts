import type { Config } from '../../config/config.js';
import type { Db } from '../../db/database.js';
import { listPasswordHashes } from '../../db/queries/admins.js';

export type Argon2Params = Config['argon2'];

const PHC_PARAMS = /^\$argon2id\$v=19\$m=(\d+),t=(\d+),p=(\d+)\$/;

/** The argon2id parameters a PHC string was made with; undefined for anything else. */
export function phcParams(phc: string): Argon2Params | undefined {
  const match = PHC_PARAMS.exec(phc);
  if (match === null) return undefined;
  const [, memoryCost, timeCost, parallelism] = match.map(Number);
  if (memoryCost === undefined || timeCost === undefined || parallelism === undefined) return undefined;
  return { memoryCost, timeCost, parallelism };
}

/**
 * The parameters most stored password hashes have, or undefined when there is none. Unknown
 * accounts are verified against a dummy hash of these: after the parameters are raised, an
 * account that has not signed in since still has the old ones, and an unknown account must cost
 * what most real accounts cost, or the time of a refused login tells whether the account exists.
 */
export async function commonStoredHashParams(db: Db): Promise<Argon2Params | undefined> {
  const counts = new Map<string, { params: Argon2Params; count: number }>();
  for (const phc of await listPasswordHashes(db)) {
    const params = phcParams(phc);
    if (params === undefined) continue;
    const key = `${params.memoryCost},${params.timeCost},${params.parallelism}`;
    const entry = counts.get(key) ?? { params, count: 0 };
    counts.set(key, { params, count: entry.count + 1 });
  }
  let best: { params: Argon2Params; count: number } | undefined;
  for (const entry of counts.values()) if (best === undefined || entry.count > best.count) best = entry;
  return best?.params;
}
