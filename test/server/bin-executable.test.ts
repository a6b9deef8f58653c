import { readFileSync, statSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { CLI_MAIN } from '../helpers/cli-run.js';

describe('the school-auth binary', () => {
  // npx installs the project into its cache once and runs the bin from there: a rebuild that
  // left dist/cli/main.js without its exec bit made `npx school-auth` fail with EACCES.
  it('is executable after every build, by its owner, group and others', () => {
    expect((statSync(CLI_MAIN).mode & 0o777).toString(8)).toBe('755');
  });

  // npm start, the image's entry point and the systemd unit run this file itself: its first line
  // is the one place the service's node options are written.
  it('starts node with the V8 options through its first line', () => {
    const [firstLine] = readFileSync(CLI_MAIN, 'utf8').split('\n');
    expect(firstLine).toBe('#!/usr/bin/env -S node --max-semi-space-size=4 --heap-growing-percent=50');
  });
});
