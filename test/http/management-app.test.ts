import { afterAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/config.js';
import { rawRequest } from '../helpers/abuse-http.js';
import { cleanupOps, loginHttp, seedWithCli, startServer } from '../helpers/ops-server.js';
import { parseExposition, valueOf } from '../helpers/ops-prometheus.js';

// The metrics say how logins fare to whoever can read them: a fresh install serves them only on
// the management listener (loopback by default), as Keycloak's management interface does.

afterAll(cleanupOps);

const PASSWORD = 'management test passphrase 3';

describe('the management listener of a fresh install', { timeout: 120_000 }, () => {
  it('serves /metrics there and not on the public port; /healthz and /readyz on both', async () => {
    const server = await startServer();

    const publicMetrics = await fetch(`${server.url}/metrics`);
    expect(publicMetrics.status).toBe(404);
    expect(await publicMetrics.json()).toEqual({ detail: 'Not Found' });

    const metrics = await fetch(`${server.managementUrl}/metrics`);
    expect(metrics.status).toBe(200);
    expect(metrics.headers.get('content-type')).toMatch(/^text\/plain/);
    expect(parseExposition(await metrics.text()).types.get('school_auth_logins_total')).toBe('counter');

    for (const base of [server.url, server.managementUrl]) {
      expect((await fetch(`${base}/healthz`)).status, `${base}/healthz`).toBe(200);
      const ready = await fetch(`${base}/readyz`);
      expect(ready.status, `${base}/readyz`).toBe(200);
      expect(await ready.json()).toEqual({ status: 'ready' });
    }
    // Nothing of the public API on the management port.
    expect((await fetch(`${server.managementUrl}/.well-known/jwks.json`)).status).toBe(404);
    expect((await fetch(`${server.managementUrl}/admin/auth/login`, { method: 'POST' })).status).toBe(404);
  });

  it('counts the public port’s logins in the management port’s metrics', async () => {
    const server = await startServer();
    await seedWithCli(server, PASSWORD);
    expect((await loginHttp(server, PASSWORD)).status).toBe(200);
    expect((await loginHttp(server, 'wrong password entirely')).status).toBe(401);
    const exposition = parseExposition(await (await fetch(`${server.managementUrl}/metrics`)).text());
    expect(valueOf(exposition, 'school_auth_logins_total', { outcome: 'success' })).toBe(1);
    expect(valueOf(exposition, 'school_auth_logins_total', { outcome: 'refused' })).toBe(1);
  });

  it('listens on loopback only by default, and on MANAGEMENT_HOST when given', async () => {
    const server = await startServer();
    const port = new URL(server.managementUrl).port;
    await expect(rawRequest(`http://127.0.0.2:${port}/healthz`)).rejects.toMatchObject({ code: 'ECONNREFUSED' });

    const elsewhere = await startServer({ MANAGEMENT_HOST: '127.0.0.2' });
    const elsewherePort = new URL(elsewhere.managementUrl).port;
    expect((await rawRequest(`http://127.0.0.2:${elsewherePort}/metrics`)).status).toBe(200);
  });

  it('MANAGEMENT_PORT=off: no management listener, no metrics anywhere, health on the public port', async () => {
    const server = await startServer({ MANAGEMENT_PORT: 'off' });
    await expect(rawRequest(`${server.managementUrl}/healthz`)).rejects.toMatchObject({ code: 'ECONNREFUSED' });
    expect((await fetch(`${server.url}/metrics`)).status).toBe(404);
    expect((await fetch(`${server.url}/readyz`)).status).toBe(200);
  });
});

describe('management settings', () => {
  it('default to 127.0.0.1:9000, as Keycloak’s port but on loopback', () => {
    expect(loadConfig({}).management).toEqual({ host: '127.0.0.1', port: 9000 });
  });

  it('MANAGEMENT_PORT=off turns the listener off', () => {
    expect(loadConfig({ MANAGEMENT_PORT: 'off' }).management).toBeUndefined();
  });

  it.each([{ MANAGEMENT_PORT: '8000' }, { PORT: '9100', MANAGEMENT_PORT: '9100' }, { MANAGEMENT_PORT: 'nine' }, { MANAGEMENT_PORT: '70000' }])(
    'refuses %o, naming MANAGEMENT_PORT',
    (env) => {
      expect(() => loadConfig(env)).toThrow(/MANAGEMENT_PORT/);
    },
  );
});
