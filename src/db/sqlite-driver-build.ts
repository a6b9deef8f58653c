import SQLite from 'better-sqlite3';
import { EXIT_CODES, StartupError } from '../errors.js';

/**
 * better-sqlite3 is a native module, built for one Node.js ABI (NODE_MODULE_VERSION): after Node.js
 * is upgraded, or with node_modules copied from another machine, it does not load. That is no
 * fault of DATA_DIR, and advice to change DATA_DIR would start an empty database: the fix is to
 * rebuild the module. Loaded here before DATA_DIR is touched, so that nothing is created first.
 */
export function loadSqliteDriver(): void {
  try {
    new SQLite(':memory:').close();
  } catch (error) {
    throw explainDriverLoadError(error) ?? error;
  }
}

/** The message and exit 7 for a native module that does not load; undefined for other errors. */
function explainDriverLoadError(error: unknown): StartupError | undefined {
  const { code, message } = (typeof error === 'object' && error !== null ? error : {}) as { code?: unknown; message?: unknown };
  const text = typeof message === 'string' ? message : '';
  const missing = text.startsWith('Could not locate the bindings file');
  if (code !== 'ERR_DLOPEN_FAILED' && !missing) return undefined;
  const versions = /NODE_MODULE_VERSION (\d+)[\s\S]*NODE_MODULE_VERSION (\d+)/.exec(text);
  const what =
    versions !== null
      ? `was built for another version of Node.js (NODE_MODULE_VERSION ${versions[1]}; this Node.js ${process.version} needs ${versions[2]})`
      : missing
        ? 'has no native module built'
        : `cannot be loaded by this Node.js (${text.split('\n', 1)[0]})`;
  // The directory whose node_modules holds it, from the path the loader names.
  const root = /([^\s'"]+?)[/\\]node_modules[/\\]better-sqlite3[/\\]/.exec(text)?.[1];
  const rebuild = root === undefined ? 'npm rebuild better-sqlite3, in the directory school-auth is installed in' : `cd ${root} && npm rebuild better-sqlite3`;
  return new StartupError(`better-sqlite3 (the SQLite driver) ${what}; nothing was opened. Rebuild it for this Node.js: ${rebuild}`, EXIT_CODES.driverBuild, { cause: error });
}
