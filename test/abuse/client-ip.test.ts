/**
 * Which client IP the throttling and the audit trail see: the socket peer, and
 * `X-Forwarded-For` only when the peer is a configured trusted proxy (read right to left).
 */
import { describe, expect, it } from 'vitest';
import { listEvents } from '../../src/db/queries/events.js';
import { useTestApps, seedAdmin, type TestApp } from '../helpers/app.js';
import { TEST_DIALECTS } from '../helpers/database.js';
import { attempt, ipFor, outcome, refused, throttled, wrong } from '../helpers/abuse-login.js';

describe.each(TEST_DIALECTS)('client IP on %s', (dialect) => {
  const open = useTestApps(dialect);

  /** The IP recorded with the newest audit event. */
  async function lastEventIp(t: TestApp, type: string): Promise<string | null | undefined> {
    const event = (await listEvents(t.services.db, { limit: 1000 })).find((row) => row.type === type);
    return event?.ip;
  }

  const xff = (value: string) => ({ 'x-forwarded-for': value });

  describe('without TRUST_PROXY', () => {
    it('ignores X-Forwarded-For: a spoofer rotating the header is throttled by its socket IP', async () => {
      const t = await open();
      const admin = await seedAdmin(t.services);
      const spoofer = '203.0.113.7';
      for (let i = 0; i < 5; i++) {
        expect(outcome(await attempt(t.app, wrong(admin), spoofer, xff(ipFor(i, '198.18'))))).toEqual(refused);
        expect(await lastEventIp(t, 'login.failure')).toBe(spoofer);
      }
      expect(outcome(await attempt(t.app, wrong(admin), spoofer, xff('198.18.9.9')))).toEqual(throttled(1));
      expect(outcome(await attempt(t.app, wrong(admin), spoofer, xff('198.18.9.10, 198.18.9.11')))).toEqual(throttled(1));
      expect(await lastEventIp(t, 'login.throttled')).toBe(spoofer);
    });

    it('does not let a spoofed header claim an IP the admin signed in from (layer 2 exemption)', async () => {
      const t = await open();
      const admin = await seedAdmin(t.services);
      const home = '192.0.2.10';
      expect((await attempt(t.app, admin, home)).status).toBe(200);
      for (let i = 0; i < 50; i++) expect((await attempt(t.app, wrong(admin), ipFor(i))).status).toBe(401);
      expect(outcome(await attempt(t.app, admin, '203.0.113.7', xff(home)))).toEqual(throttled(1));
      expect((await attempt(t.app, admin, home)).status).toBe(200);
    });
  });

  describe('with TRUST_PROXY=10.0.0.1', () => {
    const proxy = '10.0.0.1';

    it('counts a request through the proxy as the forwarded client', async () => {
      const t = await open({ TRUST_PROXY: proxy });
      const admin = await seedAdmin(t.services);
      const client = '198.51.100.9';
      expect((await attempt(t.app, wrong(admin), proxy, xff(client))).status).toBe(401);
      expect(await lastEventIp(t, 'login.failure')).toBe(client);
      for (let i = 0; i < 4; i++) expect((await attempt(t.app, wrong(admin), proxy, xff(client))).status).toBe(401);
      expect(outcome(await attempt(t.app, wrong(admin), proxy, xff(client))), 'the 6th from that client').toEqual(throttled(1));
      expect(await lastEventIp(t, 'login.throttled')).toBe(client);
      // Other clients behind the same proxy, and the proxy itself, are not throttled.
      expect(outcome(await attempt(t.app, wrong(admin), proxy, xff('198.51.100.10')))).toEqual(refused);
      expect(await lastEventIp(t, 'login.failure')).toBe('198.51.100.10');
      expect(outcome(await attempt(t.app, wrong(admin), proxy))).toEqual(refused);
      expect(await lastEventIp(t, 'login.failure')).toBe(proxy);
      // A success through the proxy is recorded with the client's IP.
      expect((await attempt(t.app, admin, proxy, xff('198.51.100.11'))).status).toBe(200);
      expect(await lastEventIp(t, 'login.success')).toBe('198.51.100.11');
    });

    it('ignores the header from a peer that is not the proxy', async () => {
      const t = await open({ TRUST_PROXY: proxy });
      const admin = await seedAdmin(t.services);
      const outsider = '203.0.113.7';
      for (let i = 0; i < 5; i++) {
        expect((await attempt(t.app, wrong(admin), outsider, xff(ipFor(i, '198.18')))).status).toBe(401);
        expect(await lastEventIp(t, 'login.failure')).toBe(outsider);
      }
      expect(outcome(await attempt(t.app, wrong(admin), outsider, xff('198.51.100.9')))).toEqual(throttled(1));
      // The client it pretended to be is untouched.
      expect(outcome(await attempt(t.app, wrong(admin), proxy, xff('198.51.100.9')))).toEqual(refused);
    });

    it('reads a chain right to left: the spoofed left part changes nothing', async () => {
      const t = await open({ TRUST_PROXY: proxy });
      const admin = await seedAdmin(t.services);
      const client = '198.51.100.9';
      expect((await attempt(t.app, wrong(admin), proxy, xff(`6.6.6.6, ${client}`))).status).toBe(401);
      expect(await lastEventIp(t, 'login.failure')).toBe(client);
      for (let i = 0; i < 4; i++) {
        expect((await attempt(t.app, wrong(admin), proxy, xff(`${ipFor(i, '6.6')}, ${client}`))).status).toBe(401);
        expect(await lastEventIp(t, 'login.failure')).toBe(client);
      }
      expect(outcome(await attempt(t.app, wrong(admin), proxy, xff(`7.7.7.7, ${client}`)))).toEqual(throttled(1));
      // The trusted proxy may also appear in the chain (two hops through it): it is skipped.
      expect(outcome(await attempt(t.app, wrong(admin), proxy, xff(`${client}, ${proxy}`)))).toEqual(throttled(1));
    });

    it('applies the layer 2 exemption to the forwarded client, not to the proxy', async () => {
      const t = await open({ TRUST_PROXY: proxy });
      const admin = await seedAdmin(t.services);
      const home = '198.51.100.20';
      expect((await attempt(t.app, admin, proxy, xff(home))).status).toBe(200);
      for (let i = 0; i < 50; i++) expect((await attempt(t.app, wrong(admin), proxy, xff(ipFor(i, '198.18')))).status).toBe(401);
      expect(outcome(await attempt(t.app, admin, proxy, xff('198.51.100.21'))), 'another client behind the proxy').toEqual(throttled(1));
      expect(outcome(await attempt(t.app, admin, proxy)), 'the proxy itself').toEqual(throttled(1));
      expect((await attempt(t.app, admin, proxy, xff(home))).status, 'the known client').toBe(200);
    });
  });

  it('accepts CIDR ranges and lists: TRUST_PROXY=10.0.0.0/8, 192.168.1.1', async () => {
    const t = await open({ TRUST_PROXY: '10.0.0.0/8, 192.168.1.1' });
    const admin = await seedAdmin(t.services);
    const client = '198.51.100.9';
    for (const peer of ['10.20.30.40', '10.255.0.1', '192.168.1.1']) {
      expect((await attempt(t.app, wrong(admin), peer, xff(client))).status).toBe(401);
      expect(await lastEventIp(t, 'login.failure'), peer).toBe(client);
    }
    for (const peer of ['11.0.0.1', '192.168.1.2', '9.255.255.255']) {
      expect((await attempt(t.app, wrong(admin), peer, xff(client))).status).toBe(401);
      expect(await lastEventIp(t, 'login.failure'), peer).toBe(peer);
    }
    // Through two trusted hops of the range: still the client.
    expect((await attempt(t.app, wrong(admin), '10.1.1.1', xff(`${client}, 10.2.2.2`))).status).toBe(401);
    expect(await lastEventIp(t, 'login.failure')).toBe(client);
    // That client has 4 failures; a 5th, then the 6th through any proxy of the range waits.
    expect((await attempt(t.app, wrong(admin), '10.9.9.9', xff(client))).status).toBe(401);
    expect(outcome(await attempt(t.app, wrong(admin), '10.3.3.3', xff(client)))).toEqual(throttled(1));
  });

  it('accepts an IPv4-mapped IPv6 peer as the trusted IPv4 proxy', async () => {
    const t = await open({ TRUST_PROXY: '10.0.0.1' });
    const admin = await seedAdmin(t.services);
    expect((await attempt(t.app, wrong(admin), '::ffff:10.0.0.1', xff('198.51.100.9'))).status).toBe(401);
    expect(await lastEventIp(t, 'login.failure')).toBe('198.51.100.9');
  });
});
