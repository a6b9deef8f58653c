import { connect } from 'node:net';
import type { AddressInfo } from 'node:net';
import { describe, expect, it } from 'vitest';
import { useTestApps } from '../helpers/app.js';

// The raw request target decides, as in Starlette (uvicorn's `scope["path"]`, the target
// percent-decoded): a path redirects only when its trailing-slash twin matches a route exactly.
// light-my-request may normalize a target, so these go over a real socket, byte for byte.
// Only the routes of the API count: the CORS preflight route (OPTIONS *) is middleware in
// Starlette, not a route, and must not make every path a twin.

const openApp = useTestApps('sqlite');

/** Sends one request line as given and returns the status code and the Location header. */
async function rawRequest(port: number, method: string, target: string): Promise<{ status: number; location: string | undefined }> {
  const socket = connect(port, '127.0.0.1');
  socket.write(`${method} ${target} HTTP/1.1\r\nHost: auth.school.test\r\nContent-Length: 0\r\nConnection: close\r\n\r\n`);
  let text = '';
  for await (const chunk of socket) text += (chunk as Buffer).toString('latin1');
  const head = text.split('\r\n\r\n', 1)[0] ?? '';
  const status = Number(/^HTTP\/1\.1 (\d{3})/.exec(head)?.[1]);
  const location = /\r\nlocation: ([^\r]*)/i.exec(head)?.[1];
  return { status, location };
}

/** With CORS on, as deployments with a browser front end run: its preflight route matches every path. */
async function listening() {
  const { app } = await openApp({ CORS_ORIGINS: 'https://admin.school.test' });
  await app.listen({ host: '127.0.0.1', port: 0 });
  return (app.server.address() as AddressInfo).port;
}

describe('the trailing-slash redirect matches the raw path exactly, as Starlette', () => {
  it('answers 404, never a redirect, to paths that only end like a route', async () => {
    const port = await listening();
    const targets = [
      ['POST', '//evil.example/admin/auth/login/'],
      ['GET', '/\\evil.example/admin/auth/me/'],
      ['GET', '//evil.example/admin/auth/me'],
      ['POST', '/x/admin/auth/login/'],
      ['GET', '/%2Fevil.example/admin/auth/me/'],
      ['GET', '//admin/auth/me/'],
      ['GET', '/admin//auth/me/'],
      ['GET', '/admin/auth/me/./'],
      ['GET', '/admin/auth/me/../me/'],
      ['GET', '//evil.example/admin/auth/login/'],
      ['GET', '/admin/auth/me/;x/'],
    ] as const;
    const answers = [];
    for (const [method, target] of targets) answers.push([method, target, await rawRequest(port, method, target)]);
    expect(answers).toEqual(targets.map(([method, target]) => [method, target, { status: 404, location: undefined }]));
  });

  it('still redirects a route with a trailing slash, and a percent-encoded one as Starlette decodes it', async () => {
    const port = await listening();
    expect(await rawRequest(port, 'POST', '/admin/auth/login/')).toEqual({ status: 307, location: 'http://auth.school.test/admin/auth/login' });
    expect(await rawRequest(port, 'GET', '/admin/auth/m%65/')).toEqual({ status: 307, location: 'http://auth.school.test/admin/auth/me' });
    // Decoded, `/admin/auth/me/%2F` is `/admin/auth/me//`: Starlette strips every trailing slash.
    expect(await rawRequest(port, 'GET', '/admin/auth/me/%2F')).toEqual({ status: 307, location: 'http://auth.school.test/admin/auth/me' });
    expect(await rawRequest(port, 'GET', '/admin/auth/me/?a=1')).toEqual({ status: 307, location: 'http://auth.school.test/admin/auth/me?a=1' });
  });
});
