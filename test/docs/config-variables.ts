import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { loadConfig } from '../../src/config/config.js';
import { REPO_ROOT } from '../helpers/cli-run.js';
import { readRepoFile } from './markdown.js';

/** The names loadConfig looks up, watched on an empty environment (every default taken). */
function variablesRead(): Set<string> {
  const read = new Set<string>();
  const env = new Proxy<Record<string, string | undefined>>({}, {
    get: (_target, name) => {
      if (typeof name === 'string') read.add(name);
      return undefined;
    },
    has: (_target, name) => {
      if (typeof name === 'string') read.add(name);
      return false;
    },
    ownKeys: () => {
      throw new Error('loadConfig lists the environment: the variables it reads cannot be watched one by one');
    },
  });
  loadConfig(env);
  return read;
}

/**
 * Variable-like names (`LOG_LEVEL`) spelled in src/config/: a setting read only under some
 * condition (one variable read only when another is set) is still found here.
 */
function variablesNamed(): Set<string> {
  const files = (readdirSync(join(REPO_ROOT, 'src', 'config'), { recursive: true }) as string[]).filter((path) => path.endsWith('.ts'));
  const names = files.flatMap((path) => [...readRepoFile(join('src', 'config', path)).matchAll(/'([A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+)'/g)].map((match) => match[1]!));
  return new Set(names);
}

/** Every environment variable the service's configuration reads. */
export function configurationVariables(): Set<string> {
  return new Set([...variablesRead(), ...variablesNamed()]);
}
