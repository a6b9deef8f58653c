/**
 * Preloaded with `--import`: loading better-sqlite3's native module fails exactly as Node fails a
 * module compiled for another Node.js (same error code, same message), without needing such a
 * build. Every other native module loads as usual.
 */
import process from 'node:process';

const dlopen = process.dlopen;

process.dlopen = function refuseBetterSqlite(module, filename, ...rest) {
  if (!String(filename).endsWith('better_sqlite3.node')) return dlopen.call(this, module, filename, ...rest);
  const error = new Error(
    `The module '${filename}'\nwas compiled against a different Node.js version using\nNODE_MODULE_VERSION 108. This version of Node.js requires\nNODE_MODULE_VERSION ${process.versions.modules}. Please try re-compiling or re-installing\nthe module (for instance, using \`npm rebuild\` or \`npm install\`).`,
  );
  error.code = 'ERR_DLOPEN_FAILED';
  throw error;
};
