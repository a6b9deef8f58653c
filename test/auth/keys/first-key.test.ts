import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { AppContext } from '../../../src/auth/context.js';
import { loadConfig, type Config } from '../../../src/config/config.js';
import { listEvents } from '../../../src/db/queries/events.js';
import { listSigningKeys } from '../../../src/db/queries/signing-keys.js';
import { closeServices, openServices } from '../../../src/services.js';
import { createPostgresDatabase, TEST_DIALECTS } from '../../helpers/database.js';

const INSTANCES = 4;

/** A fresh, empty database of `dialect` that several instances (each its own connections) share. */
async function emptyDatabase(dialect: string): Promise<{ config: Config; drop: () => Promise<void> }> {
  if (dialect === 'postgres') {
    const database = await createPostgresDatabase();
    return { config: loadConfig({ DATABASE_URL: database.url, ISSUER: 'https://auth.school.example' }), drop: () => database.drop() };
  }
  const dir = mkdtempSync(join(tmpdir(), 'school-auth-first-key-'));
  return { config: loadConfig({ DATA_DIR: dir }), drop: () => Promise.resolve(rmSync(dir, { recursive: true, force: true })) };
}

/**
 * Instances started together on an empty database (a deployment that starts two replicas) agree
 * on one signing key: the database decides which instance creates it, and its creation is audited.
 */
describe.each(TEST_DIALECTS)('the first signing key (%s)', (dialect) => {
  it(`${INSTANCES} instances starting at once create one key, recorded as one audit event`, async () => {
    const { config, drop } = await emptyDatabase(dialect);
    const opened: AppContext[] = [];
    try {
      const results = await Promise.allSettled(Array.from({ length: INSTANCES }, () => openServices(config)));
      for (const result of results) if (result.status === 'fulfilled') opened.push(result.value);
      expect(results.filter((result) => result.status === 'rejected')).toEqual([]);

      const [first] = opened;
      if (first === undefined) throw new Error('no instance opened');
      const keys = await listSigningKeys(first.db);
      expect(keys.map((key) => key.alg)).toEqual(['ES256']);
      const kids = await Promise.all(opened.map(async (services) => (await services.keys.jwks()).keys.map((key) => key.kid)));
      expect(new Set(kids.flat())).toEqual(new Set([keys[0]?.kid]));

      const events = await listEvents(first.db, { limit: 10 });
      expect(events.map(({ type, detail, user_agent }) => ({ type, detail, user_agent }))).toEqual([
        { type: 'keys.created', detail: `new ES256 key ${keys[0]?.kid ?? ''} signs now: no key of JWT_ALG ES256 signed`, user_agent: 'school-auth-server' },
      ]);
    } finally {
      await Promise.all(opened.map((services) => closeServices(services)));
      await drop();
    }
  }, 60_000);
});
