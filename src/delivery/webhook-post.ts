import { request as httpRequest, type IncomingMessage } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { isIP } from 'node:net';
import { PACKAGE_VERSION } from '../package-version.js';
import { guardedLookup, isNamedHost, isReachable, RefusedAddressError, type AddressPolicy } from './address-guard.js';

const TIMEOUT_MS = 5_000;
/** The most of an answer read (for the delivery log); the rest is never read. */
const ANSWER_LIMIT = 64 * 1024;

export interface PostResult {
  readonly status: number;
  /** The start of the answer, for `webhooks deliveries`. */
  readonly answer: string;
}

/** Plain http only to a loopback address, and only with WEBHOOK_ALLOW_HTTP_LOOPBACK. */
export function urlProblem(url: URL, allowHttpLoopback: boolean): string | undefined {
  if (url.protocol === 'https:') return undefined;
  const loopback = url.hostname === 'localhost' || url.hostname === '127.0.0.1' || url.hostname === '[::1]';
  if (url.protocol === 'http:' && loopback && allowHttpLoopback) return undefined;
  return 'webhook URLs must be https (plain http only to a loopback address with WEBHOOK_ALLOW_HTTP_LOOPBACK=true)';
}

function readAnswer(response: IncomingMessage): Promise<string> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const done = () => resolve(Buffer.concat(chunks).toString('utf8', 0, Math.min(size, ANSWER_LIMIT)));
    response.on('data', (chunk: Buffer) => {
      chunks.push(chunk);
      size += chunk.length;
      if (size >= ANSWER_LIMIT) {
        response.destroy();
        done();
      }
    });
    response.on('end', done);
    response.on('error', done);
    response.on('close', done);
  });
}

/**
 * POSTs `body` to `url`: never to a private address the policy does not name (checked on the
 * address connected to), no redirect followed (a 3xx is a failed attempt), 5 s for the whole
 * exchange, at most 64 KiB of the answer read. Throws on a network failure or a refused address.
 */
export function postWebhook(url: URL, body: string, headers: Record<string, string>, policy: AddressPolicy): Promise<PostResult> {
  const host = url.hostname.replace(/^\[|\]$/g, '');
  if (isIP(host) !== 0 && !isReachable(host, policy)) {
    return Promise.reject(new RefusedAddressError(`${host} is a private address: name it in WEBHOOK_ALLOW_PRIVATE to allow it`));
  }
  const named = isNamedHost(host, policy);
  const request = url.protocol === 'https:' ? httpsRequest : httpRequest;
  return new Promise((resolve, reject) => {
    const outgoing = request(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'user-agent': `school-auth/${PACKAGE_VERSION}`, ...headers },
      signal: AbortSignal.timeout(TIMEOUT_MS),
      ...(named ? {} : { lookup: guardedLookup(policy) }),
    });
    outgoing.on('error', reject);
    outgoing.on('response', (response) => {
      void readAnswer(response).then((answer) => resolve({ status: response.statusCode ?? 0, answer }));
    });
    outgoing.end(body);
  });
}
