import { statSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { CLI_MAIN } from '../helpers/cli-run.js';

describe('the school-auth binary', () => {
  // npx installs the project into its cache once and runs the bin from there: a rebuild that
  // left dist/cli/main.js without its exec bit made `npx school-auth` fail with EACCES.
  it('is executable after every build, by its owner, group and others', () => {
    expect((statSync(CLI_MAIN).mode & 0o777).toString(8)).toBe('755');
  });
});
