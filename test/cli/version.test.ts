import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect } from 'vitest';
import { REPO_ROOT } from '../helpers/cli-run.js';
import { cliTest as test, SLOW } from '../helpers/cli-workspace.js';

const { version } = JSON.parse(readFileSync(join(REPO_ROOT, 'package.json'), 'utf8')) as { version: string };

describe.concurrent('school-auth --version', () => {
  test('prints the package version and nothing else, without opening a database', SLOW, async ({ ws }) => {
    expect(await ws.run(['--version'])).toMatchObject({ code: 0, stdout: `${version}\n`, stderr: '' });
    expect(await ws.run(['-V'])).toMatchObject({ code: 0, stdout: `${version}\n`, stderr: '' });
  });
});
