import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { REPO_ROOT } from '../helpers/cli-run.js';
import { freePort } from '../helpers/free-port.js';
import { startServer, type RunningServer } from '../helpers/ops-server.js';
import { readRepoFile } from '../docs/markdown.js';
import { httpsRequest, ProxyProcess } from './proxy-process.js';
import { hasTool, runTool } from './tools.js';

// deploy/nginx.conf and deploy/Caddyfile run, on free ports, in front of a real server started
// with the TRUST_PROXY they document: the service must see the client's address (never one the
// client forged) and the https scheme, and answer its own 413.

const FORGED = '203.0.113.9';
let dir = '';
let app: RunningServer | undefined;
let proxy: ProxyProcess | undefined;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'school-auth-proxy-'));
});
afterEach(async () => {
  proxy?.stop();
  await app?.server.stop();
  rmSync(dir, { recursive: true, force: true });
});

/** The address the service logged for the request with this id (the log is written asynchronously). */
async function loggedIp(id: unknown): Promise<unknown> {
  for (let tries = 0; tries < 100; tries += 1) {
    const line = app!.server.requestLines().find((entry) => entry.reqId === id);
    if (line !== undefined) return line.ip;
    await sleep(50);
  }
  return undefined;
}

/** What both proxies must do, checked through the proxy listening on `port`. */
async function expectProxied(port: number): Promise<void> {
  const redirect = await httpsRequest(port, 'POST', '/admin/auth/login/', { 'x-forwarded-for': FORGED });
  expect(redirect.status).toBe(307);
  expect(redirect.headers.location).toBe('https://auth.school.example/admin/auth/login');
  expect(await loggedIp(redirect.headers['x-request-id'])).toBe('127.0.0.1');
  const tooLarge = await httpsRequest(port, 'POST', '/admin/auth/login', { 'content-type': 'application/json' }, `"${'x'.repeat(20_000)}"`);
  expect(tooLarge.status).toBe(413);
  expect(JSON.parse(tooLarge.body)).toHaveProperty('detail');
  // The same forged header straight from a trusted address is believed: the proxy is what drops it.
  const direct = await fetch(`${app!.url}/healthz`, { headers: { 'x-forwarded-for': FORGED } });
  expect(await loggedIp(direct.headers.get('x-request-id'))).toBe(FORGED);
}

describe.skipIf(!hasTool('nginx') || !hasTool('openssl'))('deploy/nginx.conf', () => {
  it('passes nginx -t, and in front of the service passes the client address and scheme', async () => {
    await runTool('openssl', ['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes', '-days', '1', '-subj', '/CN=auth.school.example', '-keyout', join(dir, 'key.pem'), '-out', join(dir, 'cert.pem')]);
    app = await startServer({ TRUST_PROXY: '127.0.0.1' }, { cwd: dir });
    const [http, https] = [await freePort(), await freePort()];
    const site = readRepoFile('deploy/nginx.conf')
      .replace(/^\s*listen \[::\].*$/gm, '')
      .replace('listen 80;', `listen 127.0.0.1:${http};`)
      .replace('listen 443 ssl', `listen 127.0.0.1:${https} ssl`)
      .replace('server 127.0.0.1:8000;', `server 127.0.0.1:${app.port};`)
      .replace(/ssl_certificate\s+\S+;/, `ssl_certificate ${join(dir, 'cert.pem')};`)
      .replace(/ssl_certificate_key\s+\S+;/, `ssl_certificate_key ${join(dir, 'key.pem')};`);
    writeFileSync(join(dir, 'site.conf'), site);
    const temp = ['client_body', 'proxy', 'fastcgi', 'uwsgi', 'scgi'].map((name) => `${name}_temp_path ${join(dir, name)};`).join(' ');
    writeFileSync(join(dir, 'nginx.conf'), `daemon off; master_process off; pid ${join(dir, 'nginx.pid')}; error_log ${join(dir, 'error.log')};\nevents {}\nhttp { access_log off; ${temp} include ${join(dir, 'site.conf')}; }\n`);
    const check = await runTool('nginx', ['-t', '-p', dir, '-c', join(dir, 'nginx.conf')]);
    expect(check.code, check.stderr).toBe(0);
    proxy = ProxyProcess.start('nginx', ['-p', dir, '-c', join(dir, 'nginx.conf')]);
    await proxy.waitListening(https);
    await expectProxied(https);
    // Past 1 MB nginx refuses the body itself: the service reads at most that much after a 413.
    const huge = await httpsRequest(https, 'POST', '/admin/auth/login', { 'content-type': 'application/json' }, `"${'x'.repeat(2_000_000)}"`);
    expect(huge.status).toBe(413);
  });
});

describe.skipIf(!hasTool('caddy'))('deploy/Caddyfile', () => {
  const caddyEnv = (): NodeJS.ProcessEnv => ({ ...process.env, HOME: dir, XDG_DATA_HOME: join(dir, 'data-home'), XDG_CONFIG_HOME: join(dir, 'config-home') });

  it('passes caddy validate, and in front of the service passes the client address and scheme', async () => {
    const validated = await runTool('caddy', ['validate', '--config', join(REPO_ROOT, 'deploy', 'Caddyfile'), '--adapter', 'caddyfile'], { env: caddyEnv() });
    expect(validated.code, validated.stderr).toBe(0);
    app = await startServer({ TRUST_PROXY: '127.0.0.1' }, { cwd: dir });
    const https = await freePort();
    // The test's own certificate authority, no admin endpoint, and the free port instead of 443.
    const caddyfile = `{\n\tadmin off\n\tlocal_certs\n\tskip_install_trust\n\tauto_https disable_redirects\n}\n${readRepoFile('deploy/Caddyfile')
      .replace('auth.school.example {', `https://auth.school.example:${https} {\n\tbind 127.0.0.1`)
      .replace('reverse_proxy 127.0.0.1:8000', `reverse_proxy 127.0.0.1:${app.port}`)}`;
    mkdirSync(join(dir, 'caddy'));
    writeFileSync(join(dir, 'caddy', 'Caddyfile'), caddyfile);
    proxy = ProxyProcess.start('caddy', ['run', '--config', join(dir, 'caddy', 'Caddyfile'), '--adapter', 'caddyfile'], caddyEnv());
    await proxy.waitListening(https);
    await expectProxied(https);
  });
});
