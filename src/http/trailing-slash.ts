import type { FastifyReply, FastifyRequest } from 'fastify';

// FastAPI's router (Starlette, `redirect_slashes`) answers a path that has no route, but whose
// twin with or without the trailing slash has one (for any method), with a 307 to that twin:
// clients of the original service called `/admin/auth/login/` and followed the redirect.
// Starlette matches the whole path as the server decoded it (`scope["path"]`), against its routes
// only: `//evil.example/admin/auth/login/` is no route's twin, and answers 404.

const utf8 = new TextDecoder('utf-8');

/** The raw path percent-decoded as uvicorn does (Python's `unquote`: bad UTF-8 becomes U+FFFD). */
function decodePath(raw: string): string {
  if (!raw.includes('%')) return raw;
  const bytes: number[] = [];
  for (let i = 0; i < raw.length; i++) {
    const hex = raw[i] === '%' ? raw.slice(i + 1, i + 3) : '';
    if (/^[0-9A-Fa-f]{2}$/.test(hex)) {
      bytes.push(Number.parseInt(hex, 16));
      i += 2;
    } else {
      bytes.push(...Buffer.from(raw[i] ?? ''));
    }
  }
  return utf8.decode(Uint8Array.from(bytes));
}

/** The paths routes were declared with (`:param` and `*` included), matched against request paths. */
export class DeclaredPaths {
  private readonly patterns = new Map<string, RegExp>();

  /**
   * A route that answers only OPTIONS is the CORS preflight's catch-all (`OPTIONS *`): in
   * Starlette that is middleware, not a route, so it never makes a path a twin.
   */
  add(url: string, methods: readonly string[]): void {
    if (methods.every((method) => method === 'OPTIONS')) return;
    if (this.patterns.has(url)) return;
    const source = url
      .split(/(:[A-Za-z0-9_]+|\*)/)
      .map((part) => (part === '*' ? '.*' : part.startsWith(':') ? '[^/]+' : part.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')))
      .join('');
    this.patterns.set(url, new RegExp(`^${source}$`));
  }

  matches(path: string): boolean {
    for (const pattern of this.patterns.values()) if (pattern.test(path)) return true;
    return false;
  }
}

/** The path Starlette tries instead: every trailing slash removed, or one added. */
function slashTwin(path: string): string | undefined {
  if (path === '/') return undefined;
  return path.endsWith('/') ? path.replace(/\/+$/, '') : `${path}/`;
}

/** What Python's `urllib.parse.quote` leaves alone with the safe characters of Starlette's RedirectResponse. */
const UNQUOTED = /[A-Za-z0-9_.\-~:/%#?=@[\]!$&'()*+,;]/;

function quote(url: string): string {
  let quoted = '';
  for (const char of url) quoted += UNQUOTED.test(char) ? char : encodeURIComponent(char);
  return quoted;
}

/** `scheme://host`: the Host header as sent, else the address the request came in on (HTTP/1.0). */
function origin(request: FastifyRequest): string {
  const host = request.headers.host;
  if (host !== undefined && host !== '') return `${request.protocol}://${host}`;
  const address = request.socket.localAddress ?? '127.0.0.1';
  const port = request.socket.localPort;
  const defaultPort = request.protocol === 'https' ? 443 : 80;
  const hostname = address.includes(':') ? `[${address}]` : address;
  return `${request.protocol}://${hostname}${port === undefined || port === defaultPort ? '' : `:${port}`}`;
}

/**
 * Answers 307 with `Location` at the slash twin of the request's path, keeping the query string,
 * with an empty body, when that twin has a route; returns false (nothing sent) otherwise.
 */
export function redirectToSlashTwin(request: FastifyRequest, reply: FastifyReply, paths: DeclaredPaths): boolean {
  const [rawPath = '', ...query] = request.url.split('?');
  const twin = slashTwin(decodePath(rawPath));
  if (twin === undefined || !paths.matches(twin)) return false;
  const search = query.length > 0 && query.join('?') !== '' ? `?${query.join('?')}` : '';
  void reply.code(307).header('location', quote(`${origin(request)}${twin}${search}`)).send();
  return true;
}
