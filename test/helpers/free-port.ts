import { randomInt } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createServer } from 'node:net';

/** Ports this process has handed out: a port chosen but not yet bound by its server is free again. */
const handedOut = new Set<number>();

/** Below the kernel's range, where no well-known service listens on a test machine. */
const LOWEST = 10_000;

/**
 * The first port of the kernel's ephemeral range, the ports it gives to `listen(0)` (a server's
 * MANAGEMENT_PORT=0) and to outgoing connections. Linux's default when the file is unreadable.
 */
function ephemeralStart(): number {
  try {
    const start = Number(readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/)[0]);
    return Number.isInteger(start) ? start : 32_768;
  } catch {
    return 32_768;
  }
}

/**
 * A TCP port nobody listens on right now, on every interface, chosen below the kernel's ephemeral
 * range and never handed out before in this process. A port the kernel chose (listen on 0, read
 * it, close) is free again until its server binds it, and in that gap the kernel can give it to
 * another `listen(0)`, the server's own management listener included; two picked in a row (a
 * server's PORT and MANAGEMENT_PORT) could also be the same port.
 */
export async function freePort(): Promise<number> {
  const end = ephemeralStart();
  if (end <= LOWEST + 1_000) throw new Error(`the ephemeral port range starts at ${end}: no room below it for test servers`);
  for (let attempt = 0; attempt < 1_000; attempt += 1) {
    const port = randomInt(LOWEST, end);
    if (handedOut.has(port) || !(await canListen(port))) continue;
    handedOut.add(port);
    return port;
  }
  throw new Error(`no free port between ${LOWEST} and ${end}`);
}

/** Whether a server could listen on `port` of every interface right now. */
function canListen(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = createServer();
    server.unref();
    server.once('error', () => resolve(false));
    server.listen(port, '0.0.0.0', () => server.close(() => resolve(true)));
  });
}
