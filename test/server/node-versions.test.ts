import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import semver from 'semver';
import { describe, expect, it } from 'vitest';
import { REPO_ROOT } from '../helpers/cli-run.js';

// `engines.node` tells operators (and npm) which Node versions run the service. It must not admit
// a version on which a production dependency cannot load, nor leave out the one we test on.

interface Manifest {
  readonly name: string;
  readonly version: string;
  readonly type?: string;
  readonly engines?: { readonly node?: string };
}

interface LockEntry {
  readonly version?: string;
  readonly dev?: boolean;
  readonly optional?: boolean;
  readonly engines?: { readonly node?: string };
}

const manifest = JSON.parse(readFileSync(join(REPO_ROOT, 'package.json'), 'utf8')) as Manifest;
const lock = JSON.parse(readFileSync(join(REPO_ROOT, 'package-lock.json'), 'utf8')) as { packages: Record<string, LockEntry> };
const ours = manifest.engines?.node ?? '';

/** Node lines that can `require()` an ES module without a flag: 20.19+ and 22.12+. */
const REQUIRE_ESM = '^20.19.0 || >=22.12.0';

/**
 * Dependencies whose engines say Node 22, loaded through `require()` from CommonJS code although
 * they are ES modules only: what they need from Node is require(esm), not Node 22.
 */
const ESM_LOADED_BY_REQUIRE: Readonly<Record<string, string>> = {
  cookie: 'light-my-request (fastify, for inject) requires cookie 2',
  'content-disposition': '@fastify/static (Swagger UI files of /docs) requires content-disposition 3',
};

function productionPackages(): Array<{ name: string; path: string; entry: LockEntry }> {
  return Object.entries(lock.packages)
    .filter(([path, entry]) => path !== '' && entry.dev !== true)
    .map(([path, entry]) => ({ name: path.slice(path.lastIndexOf('node_modules/') + 'node_modules/'.length), path, entry }));
}

describe('engines.node in package.json', () => {
  it('is a valid range that includes the Node that runs the tests', () => {
    expect(semver.validRange(ours), ours).not.toBeNull();
    expect(semver.satisfies(process.version, ours), `${process.version} in ${ours}`).toBe(true);
  });

  it('admits only versions that can require() ES modules, as two production dependencies need', () => {
    expect(semver.subset(ours, REQUIRE_ESM), `${ours} within ${REQUIRE_ESM}`).toBe(true);
  });

  it('admits no version outside the engines of any production dependency, except the ES-module ones above', () => {
    const outside: string[] = [];
    for (const { name, path, entry } of productionPackages()) {
      const theirs = entry.engines?.node;
      if (theirs === undefined || semver.validRange(theirs) === null || semver.subset(ours, theirs)) continue;
      if (name in ESM_LOADED_BY_REQUIRE) {
        const installed = JSON.parse(readFileSync(join(REPO_ROOT, path, 'package.json'), 'utf8')) as Manifest;
        expect(installed.type, `${name}: ${ESM_LOADED_BY_REQUIRE[name]}`).toBe('module');
        continue;
      }
      outside.push(`${name}@${entry.version ?? '?'} wants node ${theirs}`);
    }
    expect(outside).toEqual([]);
  });
});
