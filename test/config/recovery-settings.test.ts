/** PASSWORD_RECOVERY_URL and PASSWORD_RECOVERY_TTL: validated at start, each problem naming its variable, shown by `config check`. */
import { describe, expect, it } from 'vitest';
import { recoveryLink } from '../../src/auth/accounts/recovery-code.js';
import { describeConfig } from '../../src/cli/commands/config.js';
import { loadConfig } from '../../src/config/config.js';
import { configProblems } from '../helpers/key-files.js';

describe('PASSWORD_RECOVERY_URL', () => {
  it.each([
    ['http on a host that is not loopback', 'http://admin.school.example/reset', /^PASSWORD_RECOVERY_URL: must be https \(http only on localhost\)$/],
    ['http on a name that only starts like localhost', 'http://localhost.attacker.example/reset', /^PASSWORD_RECOVERY_URL: must be https/],
    ['another scheme', 'ftp://admin.school.example/reset', /^PASSWORD_RECOVERY_URL: must be https/],
    ['javascript:', 'javascript:alert(1)', /^PASSWORD_RECOVERY_URL: must be https/],
    ['a #fragment of its own', 'https://admin.school.example/app#/reset', /^PASSWORD_RECOVERY_URL: must have no #fragment: the recovery code is put there$/],
    ['an empty # at the end', 'https://admin.school.example/reset#', /^PASSWORD_RECOVERY_URL: must have no #fragment/],
    ['a path that is no URL', '/reset', /^PASSWORD_RECOVERY_URL: expected the URL of the front end page that completes a recovery, e\.g\. https:\/\//],
    ['a host without a scheme', 'admin.school.example/reset', /^PASSWORD_RECOVERY_URL: expected the URL/],
  ])('refuses %s, naming the variable', (_, url, problem) => {
    const problems = configProblems({ PASSWORD_RECOVERY_URL: url });
    expect(problems).toHaveLength(1);
    expect(problems[0]).toMatch(problem);
  });

  it.each(['https://admin.school.example/reset', 'https://admin.school.example:8443/account/reset?lang=fr', 'http://localhost:5173/reset', 'http://127.0.0.1/reset', 'http://[::1]:8080/reset'])(
    'accepts %s',
    (url) => {
      expect(configProblems({ PASSWORD_RECOVERY_URL: url })).toEqual([]);
      expect(loadConfig({ PASSWORD_RECOVERY_URL: url }).passwordRecovery.url).toBe(url);
    },
  );

  it('unset or blank: no page, the mail carries the code alone', () => {
    expect(loadConfig({}).passwordRecovery.url).toBeUndefined();
    expect(loadConfig({ PASSWORD_RECOVERY_URL: '  ' }).passwordRecovery.url).toBeUndefined();
  });

  it('an accepted page makes links whose one fragment carries school, username and code', () => {
    for (const page of ['https://admin.school.example/reset', 'http://localhost:5173/reset?lang=fr']) {
      const url = loadConfig({ PASSWORD_RECOVERY_URL: page }).passwordRecovery.url ?? '';
      const link = new URL(recoveryLink(url, { schoolId: 'lincoln high', username: 'a&b=c' }, 'A-b_c'));
      expect(link.href.startsWith(`${page}#`)).toBe(true);
      expect(link.href.split('#')).toHaveLength(2);
      expect(Object.fromEntries(new URLSearchParams(link.hash.slice(1)))).toEqual({ school_id: 'lincoln high', username: 'a&b=c', code: 'A-b_c' });
    }
  });
});

describe('PASSWORD_RECOVERY_TTL', () => {
  it('defaults to 900 seconds and takes 60 and 86400, the bounds', () => {
    expect(loadConfig({}).passwordRecovery.ttl).toBe(900);
    expect(loadConfig({ PASSWORD_RECOVERY_TTL: '60' }).passwordRecovery.ttl).toBe(60);
    expect(loadConfig({ PASSWORD_RECOVERY_TTL: '86400' }).passwordRecovery.ttl).toBe(86_400);
  });

  it.each(['59', '86401', '0', '-60', '15m', '900.5', 'soon'])('refuses %s, naming the variable and the range', (ttl) => {
    expect(configProblems({ PASSWORD_RECOVERY_TTL: ttl })).toEqual([`PASSWORD_RECOVERY_TTL=${JSON.stringify(ttl)}: expected a whole number from 60 to 86400`]);
  });

  it('reports a bad TTL and a bad URL together, one problem each', () => {
    const problems = configProblems({ PASSWORD_RECOVERY_TTL: '30', PASSWORD_RECOVERY_URL: 'http://admin.school.example/reset' });
    expect(problems).toHaveLength(2);
    expect(problems.map((problem) => problem.split(/[:=]/)[0]).sort()).toEqual(['PASSWORD_RECOVERY_TTL', 'PASSWORD_RECOVERY_URL']);
  });
});

describe('config check', () => {
  it('shows both settings: the defaults, then what was set', () => {
    expect(describeConfig(loadConfig({}))).toMatchObject({ PASSWORD_RECOVERY_TTL: 900, PASSWORD_RECOVERY_URL: null });
    const set = describeConfig(loadConfig({ PASSWORD_RECOVERY_TTL: '1800', PASSWORD_RECOVERY_URL: 'https://admin.school.example/reset' }));
    expect(set).toMatchObject({ PASSWORD_RECOVERY_TTL: 1800, PASSWORD_RECOVERY_URL: 'https://admin.school.example/reset' });
  });
});
