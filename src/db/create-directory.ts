import { mkdirSync, statSync } from 'node:fs';
import { dirname, resolve } from 'node:path';

/**
 * Creates `dir` and its missing parents with one mkdir each, so that the work is bounded by the
 * depth of the path. Node's recursive mkdir tries the parent again whenever the child's mkdir
 * answers ENOENT, and the parent answers EEXIST: on a file system that allows no new directory
 * (/proc, /sys) that goes on forever, at full speed and without a word.
 */
export function createDirectory(dir: string, mode: number): void {
  for (const path of missingDirectories(resolve(dir))) {
    try {
      mkdirSync(path, { mode });
    } catch (error) {
      const code = (error as { code?: unknown }).code;
      // Another instance starting at the same moment made it first.
      if (code === 'EEXIST' && statSync(path).isDirectory()) continue;
      // The parent exists (it was found, or made just before): its file system refuses.
      if (code === 'ENOENT') throw new Error(`cannot create ${path}: the file system of ${dirname(path)} does not allow it`, { cause: error });
      throw error;
    }
  }
}

/** `dir` and those of its parents that do not exist, outermost first. */
function missingDirectories(dir: string): string[] {
  const missing: string[] = [];
  for (let path = dir; statSync(path, { throwIfNoEntry: false }) === undefined; path = dirname(path)) {
    missing.unshift(path);
    if (dirname(path) === path) break;
  }
  return missing;
}
