/** `config check` and `serve` name variables and .env lines that look like mistyped settings. */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect } from 'vitest';
import { cliTest as test, parseJson, SLOW } from '../helpers/cli-workspace.js';
import { startServer } from '../helpers/ops-server.js';

/** Values an operator would not want on a terminal or in a log. */
const SECRETS = ['s3cret-env-value', 's3cret-issuer-value', '18950', 's3cret-pasted-line'];

const DOT_ENV = ['ISUER=https://s3cret-issuer-value.test', 'PORT = 18950', '# a comment', 's3cret-pasted-line', 'AUDIENCE=school-admin', ''].join('\n');
const ENV = { ACESS_TOKEN_TTL: 's3cret-env-value', UV_USE_IO_URING: '0', POSTGRES_PASSWORD: 'x', NODE_ENV: 'production' };

const EXPECTED = [
  '.env line 1: ISUER is not a setting of school-auth; did you mean ISSUER?',
  '.env line 2: spaces around "=" after PORT; write PORT=<value>, without them (docker --env-file refuses them and a shell runs the line as a command)',
  '.env line 4: not a NAME=value line; write NAME=value, or begin a comment with #',
  'environment variable ACESS_TOKEN_TTL is not a setting of school-auth; did you mean ACCESS_TOKEN_TTL?',
];

describe.concurrent('mistyped settings', () => {
  test('config check names each, one line apiece with the closest setting, and still exits 0', SLOW, async ({ ws }) => {
    writeFileSync(join(ws.root, '.env'), DOT_ENV);
    const result = await ws.run(['config', 'check'], { env: ENV });
    expect(result.code, result.stderr).toBe(0);
    expect(result.stderr).toBe(EXPECTED.map((text) => `school-auth: ${text}\n`).join(''));
    for (const secret of SECRETS) expect(result.stderr).not.toContain(secret);
    expect(parseJson<{ AUDIENCE: string }>(result).AUDIENCE).toBe('school-admin');
  });

  test('config check --strict exits 1 on them, and 0 when there are none', SLOW, async ({ ws }) => {
    writeFileSync(join(ws.root, '.env'), DOT_ENV);
    const strict = await ws.run(['config', 'check', '--strict'], { env: ENV });
    expect(strict.code).toBe(1);
    for (const text of EXPECTED) expect(strict.stderr).toContain(`school-auth: ${text}\n`);
    expect(strict.stderr).toMatch(/--strict/);

    writeFileSync(join(ws.root, '.env'), 'COMPOSE_PROJECT_NAME=school\nAUDIENCE=school-admin\n');
    const clean = await ws.run(['config', 'check', '--strict'], { env: { UV_USE_IO_URING: '0', POSTGRES_PASSWORD: 'x' } });
    expect(clean).toMatchObject({ code: 0, stderr: '' });
  });

  test('an invalid configuration names them in its one message', SLOW, async ({ ws }) => {
    const result = await ws.run(['config', 'check'], { env: { DATABASE_URL: 'postgres://u@h/db', ISUER: 'https://auth.test' } });
    expect(result.code).toBe(1);
    expect(result.stdout).toBe('');
    expect(result.stderr.match(/invalid configuration/g)).toHaveLength(1);
    expect(result.stderr).toContain('ISSUER');
    expect(result.stderr).toContain('environment variable ISUER is not a setting of school-auth; did you mean ISSUER?');
  });

  test('serve logs one warning per problem at start', SLOW, async ({ ws }) => {
    writeFileSync(join(ws.root, '.env'), DOT_ENV);
    const { server } = await startServer(ENV, { cwd: ws.root });
    try {
      const warnings = server.logLines().filter((line) => line.level === 40);
      expect(warnings.map((line) => line.msg)).toEqual(EXPECTED);
      expect(warnings.map((line) => [line.line, line.variable])).toEqual([
        [1, 'ISUER'],
        [2, 'PORT'],
        [4, undefined],
        [undefined, 'ACESS_TOKEN_TTL'],
      ]);
      for (const secret of SECRETS.filter((value) => value !== '18950')) expect(server.stdout + server.stderr).not.toContain(secret);
    } finally {
      await server.stop();
    }
  });
});
