import { spawn, type ChildProcess } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { REPO_ROOT } from './cli-run.js';

/** What the test IdP knows: its clients (as oidc-provider takes them) and users (sub -> claims). */
export interface IdpSetup {
  readonly clients: readonly Record<string, unknown>[];
  readonly users: Record<string, Record<string, unknown>>;
  readonly idTokenTtl?: number;
  readonly port?: number;
  readonly kid?: string;
  /** The email and profile claims only from UserInfo, never in the ID token (OpenID Connect Core §5.4). */
  readonly userinfoClaims?: boolean;
}

export interface IdpMode {
  readonly mode?: 'normal' | 'hang' | 'error500' | 'wrong-issuer' | 'huge-discovery' | 'huge-discovery-chunked' | 'huge-jwks' | 'huge-token' | 'huge-userinfo' | 'userinfo-other-sub';
  readonly tamper?: {
    readonly claims?: Record<string, unknown>;
    readonly dropClaims?: readonly string[];
    readonly alg?: 'none' | 'HS256';
    /** Sign with a key the IdP never published, under its own `kid` or an unknown one. */
    readonly key?: 'foreign' | 'unknown-kid';
  };
}

/** A real oidc-provider in a child process on 127.0.0.1. */
export class TestIdp {
  private constructor(
    private readonly child: ChildProcess,
    readonly port: number,
  ) {}

  get issuer(): string {
    return `http://127.0.0.1:${this.port}`;
  }

  static start(setup: IdpSetup): Promise<TestIdp> {
    const child = spawn(process.execPath, [join(REPO_ROOT, 'test', 'helpers', 'oidc-idp-process.mjs'), JSON.stringify(setup)], {
      cwd: REPO_ROOT,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    return new Promise((resolve, reject) => {
      let output = '';
      // Within vitest's 60 s hook timeout: under the whole suite's load the child can take long to
      // load oidc-provider, and one that never says it listens is stopped rather than left behind.
      const timer = setTimeout(() => {
        child.kill();
        reject(new Error(`the test IdP did not start:\n${output}`));
      }, 50_000);
      child.stderr?.on('data', (chunk: Buffer) => (output += chunk.toString()));
      child.stdout?.on('data', (chunk: Buffer) => {
        output += chunk.toString();
        const match = /listening (\d+)/.exec(output);
        if (match === null) return;
        clearTimeout(timer);
        resolve(new TestIdp(child, Number(match[1])));
      });
      child.once('exit', (code) => reject(new Error(`the test IdP exited (${String(code)}):\n${output}`)));
    });
  }

  /** Switches how the IdP misbehaves from now on. */
  async setMode(mode: IdpMode): Promise<void> {
    const response = await fetch(`${this.issuer}/__test/mode`, { method: 'POST', body: JSON.stringify(mode) });
    if (response.status !== 204) throw new Error(`setMode answered ${response.status}`);
  }

  /** A logout token signed as the IdP signs them (or with `alg` none / HS256 keyed by `secret`); a claim given as null is left out. */
  async logoutToken(claims: Record<string, unknown>, options: { alg?: 'none' | 'HS256'; secret?: string } = {}): Promise<string> {
    const response = await fetch(`${this.issuer}/__test/logout-token`, { method: 'POST', body: JSON.stringify({ claims, ...options }) });
    return (await response.json() as { logout_token: string }).logout_token;
  }

  async close(): Promise<void> {
    if (this.child.exitCode !== null || this.child.signalCode !== null) return;
    const exited = new Promise((resolve) => this.child.once('exit', resolve));
    this.child.kill('SIGKILL');
    await exited;
  }
}

/** A PKCE pair as a front end makes it. */
export function pkcePair(): { verifier: string; challenge: string } {
  const verifier = randomBytes(32).toString('base64url');
  return { verifier, challenge: createHash('sha256').update(verifier).digest('base64url') };
}

/**
 * Plays the browser at the IdP: follows its redirects with its cookies, fills the login form as
 * `login` and returns the URL the IdP finally sends the browser to (our callback, with code and state).
 */
export async function signInAtIdp(authorizationUrl: string, login: string): Promise<URL> {
  const cookies = new Map<string, string>();
  const idpOrigin = new URL(authorizationUrl).origin;
  let next: { url: string; init?: RequestInit } = { url: authorizationUrl };
  for (let hop = 0; hop < 12; hop += 1) {
    const headers = new Headers(next.init?.headers);
    headers.set('cookie', [...cookies].map(([name, value]) => `${name}=${value}`).join('; '));
    const response = await fetch(next.url, { ...next.init, headers, redirect: 'manual' });
    for (const cookie of response.headers.getSetCookie()) {
      const [pair = ''] = cookie.split(';');
      const at = pair.indexOf('=');
      cookies.set(pair.slice(0, at), pair.slice(at + 1));
    }
    const location = response.headers.get('location');
    if (location !== null) {
      const target = new URL(location, next.url);
      if (target.origin !== idpOrigin) return target;
      next = { url: target.href };
      continue;
    }
    const page = await response.text();
    const action = /action="([^"]+)"/.exec(page)?.[1];
    if (action === undefined) throw new Error(`the IdP answered ${response.status} without a form:\n${page.slice(0, 500)}`);
    const prompt = /name="prompt" value="(\w+)"/.exec(page)?.[1] ?? 'login';
    const form = new URLSearchParams(prompt === 'login' ? { prompt, login, password: 'any' } : { prompt });
    next = { url: new URL(action, next.url).href, init: { method: 'POST', body: form, headers: { 'content-type': 'application/x-www-form-urlencoded' } } };
  }
  throw new Error('too many redirects at the IdP');
}
