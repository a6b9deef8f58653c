/**
 * The port a test server is told to use must stay free until the server binds it: a server's own
 * MANAGEMENT_PORT=0 listener (and any other `listen(0)`) takes ports from the kernel's ephemeral
 * range, so a port chosen there can be gone by the time the server listens on it.
 */
import { readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { freePort } from './free-port.js';

const ephemeralStart = Number(readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/)[0]);
const listening: Server[] = [];

function listenOn(port: number, host: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    listening.push(server);
    server.once('error', reject);
    server.listen(port, host, () => {
      const address = server.address();
      resolve(typeof address === 'object' && address !== null ? address.port : -1);
    });
  });
}

afterEach(async () => {
  await Promise.all(listening.splice(0).map((server) => new Promise((resolve) => server.close(resolve))));
});

describe('freePort', () => {
  it('chooses below the kernel ephemeral range, where a listen(0) never lands', async () => {
    const ports = await Promise.all(Array.from({ length: 20 }, () => freePort()));
    for (const port of ports) expect(port).toBeLessThan(ephemeralStart);
    const kernelChosen = await Promise.all(Array.from({ length: 20 }, () => listenOn(0, '127.0.0.1')));
    for (const port of kernelChosen) expect(port).toBeGreaterThanOrEqual(ephemeralStart);
  });

  it('never hands out the same port twice in one process, and each one can be listened on', async () => {
    const ports: number[] = [];
    for (let i = 0; i < 200; i += 1) ports.push(await freePort());
    expect(new Set(ports).size).toBe(ports.length);
    for (const port of ports.slice(0, 20)) expect(await listenOn(port, '0.0.0.0')).toBe(port);
  });
});
