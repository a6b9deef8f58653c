/**
 * Every answer of an identity provider is read through a byte limit: an unauthenticated `start`
 * makes us fetch the IdP's discovery document, and a hostile or broken IdP could answer with
 * megabytes that we would parse and cache for an hour. Past the limit the read stops, the
 * connection is dropped, and the sign-in answers `temporarily_unavailable` like any IdP failure.
 */

/** Discovery documents and key sets: real ones are a few KiB. */
export const DOCUMENT_LIMIT = 1024 * 1024;
/** Token and UserInfo answers: an ID token, an access token and a few claims. */
export const TOKEN_ANSWER_LIMIT = 256 * 1024;

/** An IdP answered more bytes than we read: its trouble, reported as unavailable. */
export class IdpAnswerTooLargeError extends Error {
  readonly code = 'IDP_ANSWER_TOO_LARGE';
  constructor(url: string, limit: number) {
    super(`the identity provider's answer from ${url} is over ${limit} bytes`);
    this.name = 'IdpAnswerTooLargeError';
  }
}

type Fetch = (url: string, options: RequestInit) => Promise<Response>;

const NULL_BODY_STATUSES = new Set([101, 103, 204, 205, 304]);

async function readAtMost(body: ReadableStream<Uint8Array>, url: string, limit: number): Promise<Uint8Array> {
  const reader = body.getReader();
  const chunks: Uint8Array[] = [];
  let length = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    length += value.byteLength;
    if (length > limit) {
      await reader.cancel();
      throw new IdpAnswerTooLargeError(url, limit);
    }
    chunks.push(value);
  }
  return Buffer.concat(chunks, length);
}

/**
 * A fetch for openid-client and jose that answers a Response whose body was read whole and is at
 * most `limit` bytes, or throws IdpAnswerTooLargeError (a Content-Length over the limit is refused
 * before a byte of the body is read).
 */
export function boundedFetch(limit: number, underlying: Fetch = fetch): Fetch {
  return async (url, options) => {
    const response = await underlying(url, options);
    const declared = Number(response.headers.get('content-length') ?? '0');
    if (declared > limit) {
      await response.body?.cancel();
      throw new IdpAnswerTooLargeError(url, limit);
    }
    const body = response.body === null || NULL_BODY_STATUSES.has(response.status) ? null : await readAtMost(response.body, url, limit);
    const headers = new Headers(response.headers);
    // The body is handed on decoded: what it was encoded with no longer applies.
    headers.delete('content-encoding');
    headers.delete('content-length');
    return new Response(body, { status: response.status, statusText: response.statusText, headers });
  };
}
