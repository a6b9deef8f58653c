import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/config.js';
import { KNOWN_SETTINGS } from '../../src/config/known-settings.js';

/** The names loadConfig looks up on an empty environment, where every setting is read for its default. */
function namesRead(): string[] {
  const read = new Set<string>();
  const env = new Proxy<Record<string, string | undefined>>({}, {
    get: (_target, name) => {
      if (typeof name === 'string') read.add(name);
      return undefined;
    },
  });
  loadConfig(env);
  return [...read];
}

describe('the list of known settings', () => {
  it('is what loadConfig reads', () => {
    expect([...KNOWN_SETTINGS].sort()).toEqual(namesRead().sort());
  });
});
