import { readFileSync } from 'node:fs';
import { ConfigError, loadConfig, loadDotEnv, type Config } from './config.js';
import { scanDotEnv } from './dotenv-lines.js';
import { meantSetting } from './meant-setting.js';
import { unknownSetting, type SettingNotice } from './setting-notice.js';

type Env = Readonly<Record<string, string | undefined>>;

/**
 * Variables and `.env` lines that look like mistakes: `.env`'s lines first, in order, then the
 * environment's variables by name. A name defined in `.env` is named at its line only, since
 * `.env` put it into the environment too.
 */
export function settingNotices(env: Env, dotEnvText: string | undefined): SettingNotice[] {
  const dotEnv = scanDotEnv(dotEnvText ?? '');
  const fromFile = dotEnv.names.flatMap(({ line, name }) => {
    const suggestion = meantSetting(name);
    return suggestion === undefined ? [] : [unknownSetting(line, name, suggestion)];
  });
  const inFile = new Set(dotEnv.names.map(({ name }) => name));
  const fromEnv = Object.keys(env)
    .filter((name) => !inFile.has(name))
    .sort()
    .flatMap((name) => {
      const suggestion = meantSetting(name);
      return suggestion === undefined ? [] : [unknownSetting(undefined, name, suggestion)];
    });
  const lines = [...dotEnv.notices, ...fromFile].sort((a, b) => (a.line ?? 0) - (b.line ?? 0));
  return [...lines, ...fromEnv];
}

function readDotEnv(path: string): string | undefined {
  try {
    return readFileSync(path, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw error;
  }
}

/**
 * Loads `.env` and the configuration, with the notices about both. An invalid configuration's
 * error carries the notices too: a mistyped name is often why a required setting is missing.
 */
export function loadConfigWithNotices(dotEnvPath = '.env'): { config: Config; notices: SettingNotice[] } {
  loadDotEnv(dotEnvPath);
  const notices = settingNotices(process.env, readDotEnv(dotEnvPath));
  try {
    return { config: loadConfig(), notices };
  } catch (error) {
    if (!(error instanceof ConfigError) || notices.length === 0) throw error;
    throw new ConfigError([...error.problems, ...notices.map((notice) => notice.text)]);
  }
}
