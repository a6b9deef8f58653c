import { createServer } from 'node:net';

/** Ports this process has handed out: a port chosen but not yet bound by its server is free again. */
const handedOut = new Set<number>();

/**
 * A TCP port nobody listens on right now, on every interface (listen on 0, read it, close), and
 * never one handed out before in this process: two picked in a row (a server's PORT and
 * MANAGEMENT_PORT, say) can otherwise be the same port, since the first is not bound until its
 * server starts.
 */
export async function freePort(): Promise<number> {
  for (;;) {
    const port = await anyFreePort();
    if (handedOut.has(port)) continue;
    handedOut.add(port);
    return port;
  }
}

function anyFreePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.unref();
    server.on('error', reject);
    server.listen(0, '0.0.0.0', () => {
      const address = server.address();
      server.close(() => {
        if (address === null || typeof address === 'string') reject(new Error('no port'));
        else resolve(address.port);
      });
    });
  });
}
