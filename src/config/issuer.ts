import { isIP } from 'node:net';

/** Whether `host` is reachable from this machine only: localhost, 127.0.0.0/8 or ::1. */
export function isLoopbackHost(host: string): boolean {
  if (host.toLowerCase() === 'localhost') return true;
  if (isIP(host) === 4) return host.startsWith('127.');
  return host === '::1';
}

/**
 * The default issuer, `http://HOST:PORT`, names one process. It is right for one instance that
 * only this machine reaches; several instances on one database (DATABASE_URL), or one that
 * others reach (a HOST that is not loopback, where the URL clients use differs anyway), would
 * each sign with a name of their own and refuse each other's tokens, so ISSUER must be given.
 */
export function issuerProblem(options: { host: string; databaseUrl: string | undefined; issuer: string | undefined }): string | undefined {
  if (options.issuer !== undefined) return undefined;
  if (options.databaseUrl !== undefined) {
    return 'ISSUER: must be set when DATABASE_URL is set, to the one public URL every instance on that database signs with (for example ISSUER=https://auth.school.example)';
  }
  if (!isLoopbackHost(options.host)) {
    return `ISSUER: must be set when HOST (${options.host}) is not a loopback address, to the public URL clients and verifiers use (for example ISSUER=https://auth.school.example)`;
  }
  return undefined;
}

/** `http://HOST:PORT`, with an IPv6 address in brackets. */
export function defaultIssuer(host: string, port: number): string {
  return `http://${host.includes(':') ? `[${host}]` : host}:${port}`;
}
