/** SMTP_URL and SMTP_FROM: validated at start, each problem naming its variable; the password never shown. */
import { describe, expect, it } from 'vitest';
import { describeConfig } from '../../src/cli/commands/config.js';
import { ConfigError, loadConfig } from '../../src/config/config.js';

const FROM = 'School sign-in <no-reply@school.example>';
const SECRET = 'Smtp-S3cret';

/** The problems loadConfig reports for `env`; fails when it accepts it. */
function problemsOf(env: Record<string, string>): readonly string[] {
  try {
    loadConfig(env);
  } catch (error) {
    expect(error).toBeInstanceOf(ConfigError);
    return (error as ConfigError).problems;
  }
  throw new Error(`loadConfig accepted ${JSON.stringify(env)}`);
}

describe('SMTP settings', () => {
  it('takes smtp: (STARTTLS) and smtps: (TLS) URLs with a sender', () => {
    for (const url of ['smtp://user:pw@mail.school.example:587', 'smtps://mail.school.example:465', 'smtp://127.0.0.1:2525/?tls.rejectUnauthorized=false']) {
      expect(loadConfig({ SMTP_URL: url, SMTP_FROM: FROM }).notifications.smtp).toEqual({ url, from: FROM });
    }
    expect(loadConfig({ SMTP_URL: 'smtp://mail.school.example', SMTP_FROM: 'no-reply@school.example' }).notifications.smtp?.from).toBe('no-reply@school.example');
    expect(loadConfig({}).notifications.smtp).toBeUndefined();
  });

  it.each([
    ['SMTP_URL without SMTP_FROM', { SMTP_URL: 'smtp://mail.school.example:587' }, /^SMTP_FROM: required with SMTP_URL/],
    ['SMTP_FROM without SMTP_URL', { SMTP_FROM: FROM }, /^SMTP_FROM: set SMTP_URL too/],
    ['an http: URL', { SMTP_URL: 'http://mail.school.example', SMTP_FROM: FROM }, /^SMTP_URL: the scheme must be smtp: \(STARTTLS\) or smtps: \(TLS\), not http:$/],
    ['no URL at all', { SMTP_URL: 'mail.school.example:587', SMTP_FROM: FROM }, /^SMTP_URL: /],
    ['?ignoreTLS=true', { SMTP_URL: 'smtp://mail.school.example:587/?ignoreTLS=true', SMTP_FROM: FROM }, /^SMTP_URL: the ignoreTLS parameter is not accepted/],
    ['?requireTLS=false', { SMTP_URL: 'smtp://mail.school.example:587/?requireTLS=false', SMTP_FROM: FROM }, /^SMTP_URL: the requireTLS parameter is not accepted/],
    ['?secure=false', { SMTP_URL: 'smtps://mail.school.example/?secure=false', SMTP_FROM: FROM }, /^SMTP_URL: the secure parameter is not accepted/],
    ['?ignoreTLS percent-encoded', { SMTP_URL: 'smtp://mail.school.example/?ignore%54LS=true', SMTP_FROM: FROM }, /^SMTP_URL: the ignoreTLS parameter/],
    ['a sender that is no address', { SMTP_URL: 'smtp://mail.school.example', SMTP_FROM: 'School sign-in' }, /^SMTP_FROM: "School sign-in" is not an e-mail address$/],
    ['a sender with two addresses', { SMTP_URL: 'smtp://mail.school.example', SMTP_FROM: 'a@school.example, b@school.example' }, /^SMTP_FROM: /],
  ])('refuses %s, naming the variable', (_, env, problem) => {
    const problems = problemsOf(env);
    expect(problems).toHaveLength(1);
    expect(problems[0]).toMatch(problem);
  });

  it('reports every SMTP problem of one start together, with the others', () => {
    const problems = problemsOf({ SMTP_URL: 'ftp://mail.school.example', SMTP_FROM: 'nobody', PORT: 'abc' });
    expect(problems.filter((problem) => /^(SMTP_URL|SMTP_FROM|PORT)\b/.test(problem))).toHaveLength(3);
  });

  it('config check masks the SMTP_URL password as ****, and shows the rest', () => {
    const url = `smtp://mailer:${SECRET}@mail.school.example:587/?tls.rejectUnauthorized=false`;
    const shown = describeConfig(loadConfig({ SMTP_URL: url, SMTP_FROM: FROM }));
    expect(shown.SMTP_URL).toBe('smtp://mailer:****@mail.school.example:587/?tls.rejectUnauthorized=false');
    expect(shown.SMTP_FROM).toBe(FROM);
    expect(JSON.stringify(shown)).not.toContain(SECRET);
    const encoded = describeConfig(loadConfig({ SMTP_URL: `smtps://mailer:${SECRET}%40x@mail.school.example`, SMTP_FROM: FROM }));
    expect(encoded.SMTP_URL).toBe('smtps://mailer:****@mail.school.example');
    expect(JSON.stringify(encoded)).not.toContain(SECRET);
    // Unset: shown as such, and no SMTP_FROM.
    const none = describeConfig(loadConfig({}));
    expect(none.SMTP_URL).toBeNull();
    expect(Object.keys(none)).not.toContain('SMTP_FROM');
  });
});
