import type { FastifyInstance, LightMyRequestResponse } from 'fastify';
import { buildApp } from '../../src/app.js';
import { addAdmin } from '../../src/auth/accounts/admins.js';
import { addSchool } from '../../src/auth/accounts/schools.js';
import { loadConfig, type Config } from '../../src/config/config.js';
import { connect } from '../../src/db/connect.js';
import type { AppContext } from '../../src/auth/context.js';
import { closeServices, openServices } from '../../src/services.js';

/**
 * The real application, in this process, on the SQLite file of a DATA_DIR that the command line
 * under test also uses: logins made here create the sessions and events the CLI lists and ends.
 * It runs on the system clock, like the CLI.
 */
export interface InProcessApp {
  readonly app: FastifyInstance;
  readonly services: AppContext;
  readonly config: Config;
  seedSchool(schoolId: string, name?: string): Promise<void>;
  seedAdmin(schoolId: string, username: string, password: string): Promise<void>;
  login(credentials: LoginCredentials, client?: ClientInfo): Promise<LightMyRequestResponse>;
  /** Logs in and returns the tokens; throws on anything but 200. */
  signIn(credentials: LoginCredentials, client?: ClientInfo): Promise<{ access_token: string; refresh_token: string }>;
  refresh(refreshToken: string): Promise<LightMyRequestResponse>;
  logout(refreshToken: string, client?: ClientInfo): Promise<LightMyRequestResponse>;
  me(accessToken: string): Promise<LightMyRequestResponse>;
  close(): Promise<void>;
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
  const config = loadConfig({ DATA_DIR: dataDir, KEY_ACTIVATION_DELAY: '0', ...env });
  const services = await openServices(config, { database: connect(config) });
  const app = await buildApp(services);

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
    app,
    services,
    config,
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
    close: async () => {
      await app.close();
      await closeServices(services);
    },
  };
}
