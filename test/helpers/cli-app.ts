import type { LightMyRequestResponse } from 'fastify';
import { addAdmin } from '../../src/auth/accounts/admins.js';
import { addSchool } from '../../src/auth/accounts/schools.js';
import type { Clock } from '../../src/runtime/clock.js';
import { createTestApp, type TestApp } from './app.js';

/**
 * The real application, in this process, on the SQLite file of a DATA_DIR that the command line
 * under test also uses: logins made here create the sessions and events the CLI lists and ends.
 * It is `createTestApp` on that DATA_DIR (the system clock, like the CLI), with request helpers.
 */
export interface InProcessApp extends TestApp<Clock> {
  seedSchool(schoolId: string, name?: string): Promise<void>;
  seedAdmin(schoolId: string, username: string, password: string): Promise<void>;
  login(credentials: LoginCredentials, client?: ClientInfo): Promise<LightMyRequestResponse>;
  /** Logs in and returns the tokens; throws on anything but 200. */
  signIn(credentials: LoginCredentials, client?: ClientInfo): Promise<{ access_token: string; refresh_token: string }>;
  refresh(refreshToken: string): Promise<LightMyRequestResponse>;
  logout(refreshToken: string, client?: ClientInfo): Promise<LightMyRequestResponse>;
  me(accessToken: string): Promise<LightMyRequestResponse>;
}

export interface LoginCredentials {
  readonly school_id: string;
  readonly username: string;
  readonly password: string;
}

export interface ClientInfo {
  readonly ip?: string;
  readonly userAgent?: string;
}

export async function openInProcessApp(dataDir: string, env: Record<string, string> = {}): Promise<InProcessApp> {
  const base = await createTestApp(env, { dataDir });
  const { app, services } = base;

  const post = (url: string, body: unknown, client: ClientInfo = {}) =>
    app.inject({
      method: 'POST',
      url,
      remoteAddress: client.ip ?? '127.0.0.1',
      headers: { 'content-type': 'application/json', 'user-agent': client.userAgent ?? 'cli-test-client' },
      payload: JSON.stringify(body),
    });

  const login = (credentials: LoginCredentials, client?: ClientInfo) => post('/admin/auth/login', credentials, client);

  return {
    ...base,
    seedSchool: async (schoolId, name) => {
      await addSchool(services, schoolId, name);
    },
    seedAdmin: async (schoolId, username, password) => {
      await addAdmin(services, { schoolId, username }, password);
    },
    login,
    signIn: async (credentials, client) => {
      const response = await login(credentials, client);
      if (response.statusCode !== 200) throw new Error(`login answered ${response.statusCode}: ${response.body}`);
      return response.json<{ access_token: string; refresh_token: string }>();
    },
    refresh: (refreshToken) => post('/auth/refresh', { refresh_token: refreshToken }),
    logout: (refreshToken, client) => post('/auth/logout', { refresh_token: refreshToken }, client),
    me: (accessToken) => app.inject({ method: 'GET', url: '/admin/auth/me', headers: { authorization: `Bearer ${accessToken}` } }),
  };
}
