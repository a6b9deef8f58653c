import { createLogger } from '../../src/runtime/logger.js';
import { parseLogLines } from '../helpers/log-lines.js';
import { afterEach, describe, expect, it } from 'vitest';
import { OPS_SCHOOL, OPS_USERNAME, cleanupOps, startServer, type CliResult, type RunningServer } from '../helpers/ops-server.js';

afterEach(cleanupOps);

const PASSWORD = 'first Passphrase-for-logs 1';
const NEW_PASSWORD = 'second Passphrase-for-logs 2';
const WRONG_PASSWORD = 'wrong Passphrase-for-logs 3';
const PASSWORD_IN_BAD_JSON = 'json-body Passphrase-for-logs 4';
const PASSWORD_IN_TEXT = 'text-body Passphrase-for-logs 5';
const PASSWORD_TOO_LONG = `too-long-${'Passphrase-for-logs-6 '.repeat(60)}`;


interface Sent {
  readonly id: string | undefined;
  readonly response: Response;
  readonly answeredId: string;
  readonly route: string;
  readonly body: string;
}

/** Every request of the scenario, with the X-Request-Id it sent (if any) and the one it got back. */
class Scenario {
  readonly sent: Sent[] = [];
  private counter = 0;
  constructor(private readonly server: RunningServer) {}

  async send(
    route: string,
    init: { method?: string; body?: string; contentType?: string; headers?: Record<string, string>; requestId?: string | null },
  ): Promise<Sent> {
    const id = init.requestId === null ? undefined : (init.requestId ?? `ops-log-${++this.counter}`);
    const headers: Record<string, string> = { ...init.headers };
    if (id !== undefined) headers['x-request-id'] = id;
    if (init.contentType !== undefined) headers['content-type'] = init.contentType;
    const response = await fetch(`${this.server.url}${route}`, { method: init.method ?? 'POST', headers, body: init.body });
    const body = await response.text();
    const answeredId = response.headers.get('x-request-id') ?? '';
    const sent = { id, response, answeredId, route, body };
    this.sent.push(sent);
    return sent;
  }

  json(route: string, value: unknown, extra: { headers?: Record<string, string>; requestId?: string | null } = {}): Promise<Sent> {
    return this.send(route, { body: JSON.stringify(value), contentType: 'application/json', ...extra });
  }
}


describe('server logs through a whole scenario', () => {
  it('has one JSON line per request, keeps sane request ids, and never contains a secret', async () => {
    const server = await startServer({ LOG_LEVEL: 'trace' });
    const cli: CliResult[] = [];
    const runCli = async (args: string[], input?: string) => {
      const result = await server.cli(args, input === undefined ? {} : { input });
      expect(result.code, `${args.join(' ')}: ${result.stderr}`).toBe(0);
      cli.push(result);
      return result;
    };
    await runCli(['school', 'add', OPS_SCHOOL]);
    await runCli(['admin', 'add', '--school', OPS_SCHOOL, '--username', OPS_USERNAME, '--password-stdin'], `${PASSWORD}\n`);

    const s = new Scenario(server);
    const credentials = (password: string) => ({ school_id: OPS_SCHOOL, username: OPS_USERNAME, password });

    // Sign in with a sane incoming request id: it is kept.
    const login = await s.json('/admin/auth/login', credentials(PASSWORD), { requestId: 'abc-123' });
    expect(login.response.status).toBe(200);
    expect(login.answeredId).toBe('abc-123');
    const tokens = JSON.parse(login.body) as { access_token: string; refresh_token: string };

    expect((await s.json('/admin/auth/login', credentials(WRONG_PASSWORD))).response.status).toBe(401);

    const refreshed = await s.json('/auth/refresh', { refresh_token: tokens.refresh_token });
    expect(refreshed.response.status).toBe(200);
    const secondAccess = (JSON.parse(refreshed.body) as { access_token: string }).access_token;

    // Bad bodies that carry secrets.
    const missing = await s.json('/admin/auth/login', { school_id: OPS_SCHOOL, password: PASSWORD_IN_BAD_JSON });
    expect(missing.response.status).toBe(422);
    const wrongType = await s.json('/admin/auth/login', { school_id: OPS_SCHOOL, username: 42, password: PASSWORD_IN_BAD_JSON });
    expect(wrongType.response.status).toBe(422);
    const tooLong = await s.json('/admin/auth/login', credentials(PASSWORD_TOO_LONG));
    expect(tooLong.response.status).toBe(422);
    const text = await s.send('/admin/auth/login', {
      body: `school_id=${OPS_SCHOOL}&username=${OPS_USERNAME}&password=${PASSWORD_IN_TEXT}`,
      contentType: 'text/plain',
    });
    expect(text.response.status).toBe(422);
    const textRefresh = await s.send('/auth/refresh', { body: tokens.refresh_token, contentType: 'text/plain' });
    expect(textRefresh.response.status).toBe(422);
    const brokenJson = await s.send('/admin/auth/login', { body: `{"password": "${PASSWORD_IN_BAD_JSON}",`, contentType: 'application/json' });
    expect(brokenJson.response.status).toBe(422);

    // The Authorization header, with insane request ids: those are replaced.
    const longId = 'x'.repeat(300);
    const me = await s.send('/admin/auth/me', { method: 'GET', headers: { authorization: `Bearer ${secondAccess}` }, requestId: longId });
    expect(me.response.status).toBe(200);
    expect(me.answeredId).not.toBe(longId);
    expect(me.answeredId).toMatch(/^[\w.:-]{8,128}$/);
    const spacedId = 'abc 123; drop table';
    const me2 = await s.send('/admin/auth/me', { method: 'GET', headers: { authorization: `Bearer ${tokens.access_token}` }, requestId: spacedId });
    expect(me2.response.status).toBe(200);
    expect(me2.answeredId).not.toBe(spacedId);
    expect(me2.answeredId).toMatch(/^[\w.:-]{8,128}$/);
    expect(me2.answeredId).not.toBe(me.answeredId);
    const badBearer = await s.send('/admin/auth/me', { method: 'GET', headers: { authorization: `Bearer ${tokens.access_token}x` } });
    expect(badBearer.response.status).toBe(401);
    // No id at all: one is made up.
    const anonymous = await s.send('/readyz', { method: 'GET', requestId: null });
    expect(anonymous.answeredId).toMatch(/^[\w.:-]{8,128}$/);

    expect((await s.json('/auth/logout', { refresh_token: tokens.refresh_token })).response.status).toBe(204);

    // The command line, with its output captured too.
    await runCli(['admin', 'passwd', '--school', OPS_SCHOOL, '--username', OPS_USERNAME, '--password-stdin'], `${NEW_PASSWORD}\n`);
    const newLogin = await s.json('/admin/auth/login', credentials(NEW_PASSWORD));
    expect(newLogin.response.status).toBe(200);
    const newTokens = JSON.parse(newLogin.body) as { access_token: string; refresh_token: string };
    const [sessions, events] = await Promise.all([
      runCli(['sessions', 'list', '--school', OPS_SCHOOL]),
      runCli(['events', '--school', OPS_SCHOOL, '--json']),
    ]);
    expect(sessions.stdout).toContain(OPS_USERNAME);
    expect(events.stdout).toContain(OPS_USERNAME);

    // The lines of the requests above; startServer's own GET /healthz polls are not part of the scenario.
    const requestLinesNow = () => parseLogLines(server.stdout()).filter((line) => line.msg === 'request' && line.route !== '/healthz');
    // Let the last log lines reach the pipe.
    await expect.poll(() => requestLinesNow().length, { timeout: 5000 }).toBe(s.sent.length);
    const requestLines = requestLinesNow();
    expect(requestLines).toHaveLength(s.sent.length);
    for (const sent of s.sent) {
      const matching = requestLines.filter((line) => line.reqId === sent.answeredId);
      expect(matching, `log lines of ${sent.route} ${sent.answeredId}`).toHaveLength(1);
      const line = matching[0]!;
      expect(line.route).toBe(sent.route);
      expect(line.status).toBe(sent.response.status);
      expect(typeof line.durationMs).toBe('number');
      expect(line.durationMs).toBeGreaterThanOrEqual(0);
      expect(line.ip).toBe('127.0.0.1');
      if (sent.id !== undefined && /^[A-Za-z0-9._:-]{1,128}$/.test(sent.id)) expect(sent.answeredId).toBe(sent.id);
    }
    expect(requestLines.find((line) => line.reqId === 'abc-123')).toMatchObject({ route: '/admin/auth/login', status: 200 });
    const allServerOutput = server.stdout() + server.stderr();
    expect(allServerOutput).not.toContain(longId);
    expect(allServerOutput).not.toContain(spacedId);

    // No secret anywhere: server output, CLI output, and the error answers.
    const secrets: Record<string, string> = {
      PASSWORD,
      NEW_PASSWORD,
      WRONG_PASSWORD,
      PASSWORD_IN_BAD_JSON,
      PASSWORD_IN_TEXT,
      PASSWORD_TOO_LONG,
      'refresh token': tokens.refresh_token,
      'new refresh token': newTokens.refresh_token,
      'access token': tokens.access_token,
      'refreshed access token': secondAccess,
      'new access token': newTokens.access_token,
      'authorization header': `Bearer ${secondAccess}`,
      'access token signature': tokens.access_token.split('.')[2]!,
      'refreshed access token signature': secondAccess.split('.')[2]!,
    };
    const cliOutput = cli.map((result) => result.stdout + result.stderr).join('\n');
    const errorAnswers = s.sent.filter((sent) => sent.response.status >= 400).map((sent) => sent.body).join('\n');
    for (const [name, secret] of Object.entries(secrets)) {
      expect(secret.length, name).toBeGreaterThanOrEqual(12);
      expect(allServerOutput.includes(secret), `${name} in the server output`).toBe(false);
      expect(cliOutput.includes(secret), `${name} in the CLI output`).toBe(false);
      expect(errorAnswers.includes(secret), `${name} in an error answer`).toBe(false);
    }
    // Also no fragment of a password: its distinctive part is in none of them.
    expect(allServerOutput + cliOutput + errorAnswers).not.toMatch(/Passphrase-for-logs/);
  });
});

describe('createLogger', () => {
  function capture(level: string) {
    const lines: Record<string, unknown>[] = [];
    const logger = createLogger(level, { write: (line: string) => lines.push(JSON.parse(line) as Record<string, unknown>) });
    return { logger, lines };
  }

  it('censors secrets at the paths a log line could carry them, and nothing else', () => {
    const { logger, lines } = capture('info');
    logger.info(
      {
        password: 'p1',
        refresh_token: 'r1',
        access_token: 'a1',
        body: { password: 'p2', refresh_token: 'r2', school_id: 'lincoln-high' },
        req: { headers: { authorization: 'Bearer a2', cookie: 'c=1', host: 'h' }, body: { password: 'p3', refresh_token: 'r3' } },
        headers: { authorization: 'Bearer a3' },
        username: 'alice',
      },
      'm',
    );
    const text = JSON.stringify(lines);
    for (const secret of ['p1', 'p2', 'p3', 'r1', 'r2', 'r3', 'a1', 'Bearer a2', 'Bearer a3', 'c=1']) expect(text).not.toContain(`"${secret}"`);
    expect(lines[0]).toMatchObject({ username: 'alice', body: { school_id: 'lincoln-high', password: '[redacted]' }, req: { headers: { host: 'h' } } });
  });

  it('keeps the redaction in per-request child loggers', () => {
    const { logger, lines } = capture('info');
    logger.child({ reqId: 'r-1' }).warn({ password: 'p4' }, 'm');
    expect(lines[0]).toMatchObject({ reqId: 'r-1', password: '[redacted]', level: 40 });
  });
});
