/**
 * What bounds a SCIM client: a per-token throttle (SCIM_RATE a second, bursts of SCIM_BURST, per instance, on the
 * injected clock), a 64 KiB body, a filter of at most 10 comparisons and 5 levels refused before
 * the database is asked, and pages of at most 200.
 */
import { SCIM_BURST, SCIM_RATE } from '../../../src/http/routes/scim/scim-throttle.js';
import type { LightMyRequestResponse } from 'fastify';
import { afterEach, describe, expect, it } from 'vitest';
import { useTestApps, type TestApp } from '../../helpers/app.js';
import { TEST_DIALECTS } from '../../helpers/database.js';
import { ERROR_SCHEMA, USER_SCHEMA, entraUser, scimClient, scimSchool } from '../../helpers/scim.js';
import { createRecordedApp, insertAdmins, StatementRecorder } from '../../helpers/scim-admins.js';

const BODY_LIMIT = 65_536;

function expectScimError(response: LightMyRequestResponse, status: number, scimType?: string): void {
  expect(response.statusCode, response.body).toBe(status);
  expect(response.headers['content-type']).toBe('application/scim+json; charset=utf-8');
  expect(response.json()).toMatchObject({ schemas: [ERROR_SCHEMA], status: String(status), ...(scimType === undefined ? {} : { scimType }) });
}

/** `n` requests at once (the clock does not move between them); their status codes. */
async function statuses(n: number, request: () => Promise<LightMyRequestResponse>): Promise<number[]> {
  return (await Promise.all(Array.from({ length: n }, request))).map((response) => response.statusCode);
}

/** A User whose JSON is exactly `bytes` long (the title pads it). */
function userOfSize(bytes: number): string {
  const body = (title: string) => JSON.stringify({ schemas: [USER_SCHEMA], userName: 'padded@district.example', title });
  const json = body('x'.repeat(bytes - Buffer.byteLength(body(''))));
  expect(Buffer.byteLength(json)).toBe(bytes);
  return json;
}

describe.each(TEST_DIALECTS)('SCIM limits (%s)', (dialect) => {
  const open = useTestApps(dialect);
  const recorded: TestApp[] = [];
  afterEach(async () => {
    await Promise.all(recorded.splice(0).map((t) => t.close()));
  });

  it(`throttles each token: a burst of ${SCIM_BURST} in one millisecond, then 429 with Retry-After, then ${SCIM_RATE} a second; another token has its own bucket`, async () => {
    const t = await open();
    const first = await scimSchool(t.services);
    const second = await scimSchool(t.services, first.schoolId);
    const one = scimClient(t.app, first.token);
    const two = scimClient(t.app, second.token);

    expect(await statuses(SCIM_BURST, () => one.get('/ServiceProviderConfig'))).toEqual(Array(SCIM_BURST).fill(200));
    const refused = await one.get('/Users');
    expectScimError(refused, 429);
    expect(refused.headers['retry-after']).toBe('1');
    // A refused write writes nothing.
    expectScimError(await one.post('/Users', entraUser('late@district.example')), 429);
    expect(await t.services.db.selectFrom('admins').select('id').where('username', '=', 'late@district.example').execute()).toEqual([]);

    // The same school's other token is not slowed down by the first, and has a bucket of its own size.
    expect(await statuses(SCIM_BURST, () => two.get('/Users'))).toEqual(Array(SCIM_BURST).fill(200));
    expectScimError(await two.get('/Users'), 429);

    // Refilled at SCIM_RATE a second: half a second, half as many more.
    t.clock.advance(0.5);
    expect(await statuses(SCIM_RATE / 2, () => one.get('/Users'))).toEqual(Array(SCIM_RATE / 2).fill(200));
    expectScimError(await one.get('/Users'), 429);

    t.clock.advance(1);
    expect(await statuses(SCIM_RATE, () => one.get('/Users'))).toEqual(Array(SCIM_RATE).fill(200));
    expectScimError(await one.get('/Users'), 429);
    // However long the pause, a burst is at most SCIM_BURST.
    t.clock.advance(3600);
    expect(await statuses(SCIM_BURST + 1, () => one.get('/ServiceProviderConfig')).then((codes) => codes.filter((code) => code === 200).length)).toBe(SCIM_BURST);
  });

  it('refuses a body over 65,536 bytes with 413 in SCIM form; one of exactly that size is read', async () => {
    const t = await open();
    const { token } = await scimSchool(t.services);
    const scim = scimClient(t.app, token);
    const created = await scim.post('/Users', entraUser('ryan@district.example'));
    const { id } = created.json<{ id: string }>();
    const send = (method: 'POST' | 'PUT' | 'PATCH', url: string, payload: string, contentType = 'application/scim+json', authorization = `Bearer ${token}`) =>
      t.app.inject({ method, url: `/scim/v2${url}`, payload, headers: { authorization, 'content-type': contentType } });

    const tooLarge = userOfSize(BODY_LIMIT + 1);
    for (const [method, url] of [['POST', '/Users'], ['PUT', `/Users/${id}`], ['PATCH', `/Users/${id}`]] as const) {
      for (const contentType of ['application/scim+json', 'application/json']) {
        const response = await send(method, url, tooLarge, contentType);
        expectScimError(response, 413);
        expect(response.json<{ detail: string }>().detail).toBe('the body is larger than 65536 bytes');
      }
    }
    // At the limit (four times the service's default body limit), the body is read: the title is what is wrong.
    const atLimit = await send('POST', '/Users', userOfSize(BODY_LIMIT));
    expectScimError(atLimit, 400, 'invalidValue');
    expect(atLimit.json<{ detail: string }>().detail).toMatch(/title is longer than 1024 characters/);
    // Without a valid token, nothing is read: 401, not 413.
    expectScimError(await send('POST', '/Users', tooLarge, 'application/scim+json', 'Bearer scim_nope'), 401);
    expect((await scim.get('/Users')).json()).toMatchObject({ totalResults: 1 });
  });

  it('refuses a filter of 11 comparisons, or nested too deep, with 400 invalidFilter before reading any admin', async () => {
    const recorder = new StatementRecorder();
    const t = await createRecordedApp(dialect, recorder);
    recorded.push(t);
    const { token } = await scimSchool(t.services);
    const scim = scimClient(t.app, token);
    const list = (filter: string) => scim.get(`/Users?filter=${encodeURIComponent(filter)}`);
    const comparisons = (n: number) => Array.from({ length: n }, (_, i) => `userName eq "user${i}"`).join(' or ');

    // What any request costs (finding the token and noting its use), and what a list costs beyond it.
    const authOnly = await recorder.count(() => scim.get('/ServiceProviderConfig'));
    expect(authOnly).toBeGreaterThan(0);
    const ten = await list(comparisons(10));
    expect(ten.json()).toMatchObject({ totalResults: 0 });
    expect(await recorder.count(() => list(comparisons(10)))).toBeGreaterThan(authOnly);

    const refused: [string, string][] = [
      ['11 comparisons', comparisons(11)],
      ['11 comparisons, and-ed and grouped', `(${comparisons(5).replaceAll(' or ', ' and ')}) or (${comparisons(6)})`],
      ['6 levels', `${'('.repeat(6)}userName eq "x"${')'.repeat(6)}`],
      ['480 levels', `${'('.repeat(480)}userName eq "x"${')'.repeat(480)}`],
      ['1,000 levels', `${'('.repeat(1000)}userName eq "x"${')'.repeat(1000)}`],
      ['1,000 unclosed', '('.repeat(1000)],
      ['140 nots', `${'not ('.repeat(140)}userName eq "x"${')'.repeat(140)}`],
      ['100,000 levels', `${'('.repeat(100_000)}userName eq "x"${')'.repeat(100_000)}`],
    ];
    for (const [name, filter] of refused) {
      let response: LightMyRequestResponse | undefined;
      const statements = await recorder.count(async () => {
        response = await list(filter);
      });
      expectScimError(response!, 400, 'invalidFilter');
      expect(statements, name).toBe(authOnly);
    }
    // Five levels are fine, and the service is still answering.
    expect((await list(`${'('.repeat(5)}userName eq "x"${')'.repeat(5)}`)).statusCode).toBe(200);
    // A PATCH path goes through the same parser.
    const { id } = (await scim.post('/Users', entraUser('ryan@district.example'))).json<{ id: string }>();
    const deepPath = await scim.patch(`/Users/${id}`, [{ op: 'remove', path: `emails[${'('.repeat(1000)}value eq "x"${')'.repeat(1000)}]` }]);
    expect(deepPath.statusCode, deepPath.body).toBe(400);
    expect((await scim.get(`/Users/${id}`)).statusCode).toBe(200);
  });

  it('answers at most 200 resources per page, whatever count asks for', async () => {
    const t = await open();
    const { token, schoolId } = await scimSchool(t.services);
    await insertAdmins(t.services.db, schoolId, 250);
    const scim = scimClient(t.app, token);
    const page = async (query: string) => (await scim.get(`/Users?${query}`)).json<{ totalResults: number; startIndex: number; itemsPerPage: number; Resources: { id: string }[] }>();

    const huge = await page('count=100000');
    expect(huge).toMatchObject({ totalResults: 250, startIndex: 1, itemsPerPage: 200 });
    expect(huge.Resources).toHaveLength(200);
    const unasked = await page('');
    expect(unasked.Resources).toHaveLength(200);
    const rest = await page('startIndex=201&count=100000');
    expect(rest).toMatchObject({ totalResults: 250, startIndex: 201, itemsPerPage: 50 });
    // The two pages are the 250 admins, each once.
    expect(new Set([...huge.Resources, ...rest.Resources].map((user) => user.id)).size).toBe(250);
    expect(await page('count=0')).toMatchObject({ totalResults: 250, itemsPerPage: 0, Resources: [] });
  });
});
