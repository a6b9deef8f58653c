import { describe, expect } from 'vitest';
import { cliTest as test, ok, parseJson, SLOW } from '../helpers/cli-workspace.js';

const PASSWORD = 'correct horse battery staple';

// What an unauthenticated client may type as a username: a terminal title change (OSC), a forged
// row after a newline, a carriage return over the line, a C1 CSI, DEL and a right-to-left override.
const HOSTILE = [
  '\u001b]0;pwned\u0007',
  'mallory\n2026-01-05T08:00:00.000Z  login.success  lincoln-high  alice',
  'eve\rroot',
  '\u009b31mred',
  'del\u007f',
  'abc\u202eevil',
];

/** Anything a terminal would act on, besides the newline that ends each row. */
// eslint-disable-next-line no-control-regex -- matching control characters is the point
const CONTROL = /[\u0000-\u0009\u000b-\u001f\u007f-\u009f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]/;

describe.concurrent('school-auth events with hostile usernames', () => {
  test('the table escapes every control character, so no row is forged and the terminal is not changed; --json is exact', SLOW, async ({ ws }) => {
    const app = await ws.app();
    await app.seedSchool('lincoln-high');
    for (const username of HOSTILE) {
      expect((await app.login({ school_id: 'lincoln-high', username, password: PASSWORD })).statusCode).toBe(401);
    }

    const table = ok(await ws.run(['events']));
    expect(table.stdout).not.toMatch(CONTROL);
    const lines = table.stdout.trimEnd().split('\n');
    // A header, the first signing key's and the school's creation and one row per attempt: nothing more.
    expect(lines).toHaveLength(1 + 2 + HOSTILE.length);
    // Each row is a real event: the forged `login.success` stays inside the username's cell.
    for (const line of lines.slice(1)) expect(line).toMatch(/^\S+Z\s+(-\s+-\s+signing key created at start|lincoln-high\s+-\s+school created|lincoln-high\s+.+\ssign-in refused: no such administrator)[\s:]/);
    expect(table.stdout).toContain('\\x1b]0;pwned\\x07');
    expect(table.stdout).toContain('mallory\\n2026-01-05T08:00:00.000Z');
    expect(table.stdout).toContain('eve\\rroot');
    expect(table.stdout).toContain('\\x9b31mred');
    expect(table.stdout).toContain('del\\x7f');
    expect(table.stdout).toContain('abc\\u202eevil');

    const json = ok(await ws.run(['events', '--json']));
    expect(json.stdout.trimEnd()).not.toMatch(CONTROL);
    const usernames = parseJson<{ type: string; username: string }[]>(json)
      .filter((event) => event.type === 'login.failure')
      .map((event) => event.username);
    expect(usernames.reverse()).toEqual(HOSTILE);
  });
});
