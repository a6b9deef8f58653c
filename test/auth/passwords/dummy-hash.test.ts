import { performance } from 'node:perf_hooks';
import { describe, expect, it } from 'vitest';
import { buildApp } from '../../../src/app.js';
import type { Dialect } from '../../../src/db/database.js';
import { closeServices, openServices } from '../../../src/services.js';
import { PASSWORD, postJson, seedAdmin, testConfig } from '../../helpers/app.js';
import { TestClock } from '../../helpers/clock.js';
import { TEST_DIALECTS, createTestDatabase } from '../../helpers/database.js';

const OLD = { ARGON2_ITERATIONS: '2', LOGIN_THROTTLE: 'off' };
// Eight times the work: a difference no noise of this machine hides.
const RAISED = { ARGON2_ITERATIONS: '16', LOGIN_THROTTLE: 'off' };

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] ?? Number.NaN;
}

/** An admin hashed with the old parameters, then a server started with raised ones. */
async function raisedServer(dialect: Dialect) {
  const database = await createTestDatabase(dialect);
  const clock = new TestClock();
  const before = await openServices(testConfig(OLD), { clock, database });
  const admin = await seedAdmin(before);
  await before.hasher.close();
  const after = await openServices(testConfig(RAISED), { clock, database });
  const app = await buildApp(after);
  return { admin, app, close: async () => (await app.close(), await closeServices(after)) };
}

describe.each(TEST_DIALECTS)('dummy hash after raising the argon2 parameters on %s', (dialect) => {
  it('costs an unknown account what an existing account that has not signed in since costs', { timeout: 60_000 }, async () => {
    const { admin, app, close } = await raisedServer(dialect);
    try {
      const attempt = async (username: string) => {
        const started = performance.now();
        const response = await postJson(app, '/admin/auth/login', { school_id: admin.schoolId, username, password: `${PASSWORD}!` });
        expect(response.statusCode).toBe(401);
        return performance.now() - started;
      };
      const known: number[] = [];
      const unknown: number[] = [];
      await attempt('warm-up');
      for (let round = 0; round < 7; round += 1) {
        known.push(await attempt(admin.username));
        unknown.push(await attempt(`nobody-${round}`));
      }
      const ratio = median(unknown) / median(known);
      expect(ratio, `unknown ${median(unknown).toFixed(1)} ms, known ${median(known).toFixed(1)} ms`).toBeLessThan(1.6);
      expect(ratio).toBeGreaterThan(1 / 1.6);
    } finally {
      await close();
    }
  });
});
