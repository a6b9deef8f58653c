/** Which names and .env lines are named as probable mistakes, and what is said about them. */
import { describe, expect, it } from 'vitest';
import { KNOWN_SETTINGS } from '../../src/config/known-settings.js';
import { settingNotices } from '../../src/config/setting-notices.js';

const texts = (env: Record<string, string>, dotEnv?: string) => settingNotices(env, dotEnv).map((notice) => notice.text);

describe('mistyped environment variables', () => {
  it('names each with the closest setting', () => {
    expect(texts({ ACESS_TOKEN_TTL: '60', ISUER: 'https://auth.test' })).toEqual([
      'environment variable ACESS_TOKEN_TTL is not a setting of school-auth; did you mean ACCESS_TOKEN_TTL?',
      'environment variable ISUER is not a setting of school-auth; did you mean ISSUER?',
    ]);
  });

  it('names a setting written in the wrong case', () => {
    expect(texts({ Port: '8001', log_level: 'debug' })).toEqual([
      'environment variable Port is not a setting of school-auth; did you mean PORT?',
      'environment variable log_level is not a setting of school-auth; did you mean LOG_LEVEL?',
    ]);
  });

  it('names any name with the first word of a setting, however far from every setting', () => {
    const notices = settingNotices({ SSO_CLIENT_SECRET: 'x', WEBAUTHN_RPID: 'x', AUDIT_SEAL_EVERY: 'x' }, undefined);
    expect(notices.map((notice) => [notice.variable, notice.suggestion])).toEqual([
      ['AUDIT_SEAL_EVERY', 'AUDIT_SEAL_INTERVAL'],
      ['SSO_CLIENT_SECRET', expect.stringMatching(/^SSO_/)],
      ['WEBAUTHN_RPID', 'WEBAUTHN_RP_ID'],
    ]);
  });

  it('leaves the variables of other software alone', () => {
    const others = {
      PATH: '/usr/bin', HOME: '/home/x', USER: 'x', HOSTNAME: 'box', PWD: '/srv', SHELL: '/bin/sh', TERM: 'xterm', LANG: 'C',
      NODE_ENV: 'production', NODE_OPTIONS: '', UV_USE_IO_URING: '0', npm_config_cache: '/x', npm_lifecycle_event: 'start',
      POSTGRES_PASSWORD: 'x', PGHOST: 'db', PGPORT: '5432', KUBERNETES_SERVICE_HOST: '10.0.0.1', HTTPS_PROXY: 'http://p', no_proxy: 'localhost',
      INVOCATION_ID: 'x', CREDENTIALS_DIRECTORY: '/run/x', TZ: 'UTC', LOGNAME: 'x', OLDPWD: '/', SHLVL: '1', _: '/usr/bin/node',
    };
    expect(texts(others)).toEqual([]);
  });

  it('never names a setting of its own', () => {
    expect(texts(Object.fromEntries(KNOWN_SETTINGS.map((name) => [name, 'x'])))).toEqual([]);
  });
});

describe('lines of .env', () => {
  it('names a mistyped name by its line', () => {
    expect(texts({}, '# settings\nISUER=https://auth.test\n\nAUDIENCE=ok\n')).toEqual(['.env line 2: ISUER is not a setting of school-auth; did you mean ISSUER?']);
  });

  it('names spaces around "=" and says how to write the line', () => {
    expect(texts({}, 'AUDIENCE=ok\nPORT = 18950\n')).toEqual([
      '.env line 2: spaces around "=" after PORT; write PORT=<value>, without them (docker --env-file refuses them and a shell runs the line as a command)',
    ]);
  });

  it('names a space on one side only, or a tab', () => {
    expect(settingNotices({}, 'PORT =1\nHOST= 127.0.0.1\nAUDIENCE\t=x\n').map((notice) => [notice.line, notice.variable])).toEqual([
      [1, 'PORT'],
      [2, 'HOST'],
      [3, 'AUDIENCE'],
    ]);
  });

  it('names a line that is not NAME=value by its number only', () => {
    const notices = settingNotices({}, 'AUDIENCE=ok\nISSUER https://auth.test\n: broken\n1PORT=3\nexport  HOST=x\nexport HOST=127.0.0.1\n');
    expect(notices.map((notice) => notice.text)).toEqual([2, 3, 4, 5].map((line) => `.env line ${line}: not a NAME=value line; write NAME=value, or begin a comment with #`));
  });

  it('reads a quoted value over several lines as one, and names a quote never closed', () => {
    expect(texts({}, 'AUDIENCE="two\nlines"\nISSUER=\'never closed\nHOST=127.0.0.1\n')).toEqual([
      ".env line 3: the value of ISSUER opens a quote (') that no later line closes; close it, or remove it",
    ]);
  });

  it('names a byte-order mark, which would become part of the first name', () => {
    expect(texts({}, '\uFEFFAUDIENCE=ok\n')).toEqual(['.env line 1: the file begins with a byte-order mark, which becomes part of the first name; save .env without it']);
  });

  it('accepts comments, blank lines, export, quotes, Windows line ends and leading spaces', () => {
    expect(texts({}, '# c\r\n\r\n  AUDIENCE=ok\r\nexport HOST=127.0.0.1\r\nISSUER="https://auth.test" # where\r\nJWT_ALG=\r\n')).toEqual([]);
  });

  it('names a name in both .env and the environment once, by its line', () => {
    expect(texts({ ISUER: 'a' }, 'ISUER=b\n')).toEqual(['.env line 1: ISUER is not a setting of school-auth; did you mean ISSUER?']);
  });

  it('leaves the variables of other software in .env alone', () => {
    expect(texts({}, 'COMPOSE_PROJECT_NAME=school\nPOSTGRES_PASSWORD=x\nTZ=UTC\n')).toEqual([]);
  });
});
