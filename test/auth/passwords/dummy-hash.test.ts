import { describe, expect, it, vi } from 'vitest';
import { buildApp } from '../../../src/app.js';
import type { Dialect } from '../../../src/db/database.js';
import { closeServices, openServices } from '../../../src/services.js';
import { PASSWORD, postJson, seedAdmin, testConfig } from '../../helpers/app.js';
import { TestClock } from '../../helpers/clock.js';
import { TEST_DIALECTS, createTestDatabase } from '../../helpers/database.js';

const OLD = { ARGON2_ITERATIONS: '2', LOGIN_THROTTLE: 'off' };
// Eight times the work.
const RAISED = { ARGON2_ITERATIONS: '16', LOGIN_THROTTLE: 'off' };

/** An admin hashed with the old parameters, then a server started with raised ones. */
async function raisedServer(dialect: Dialect) {
  const database = await createTestDatabase(dialect);
  const clock = new TestClock();
  const before = await openServices(testConfig(OLD), { clock, database });
  const admin = await seedAdmin(before);
  await before.hasher.close();
  const after = await openServices(testConfig(RAISED), { clock, database });
  const app = await buildApp(after);
  return { admin, app, services: after, close: async () => (await app.close(), await closeServices(after)) };
}

/** The parameters of a PHC string (`$argon2id$v=19$m=19456,t=2,p=1$salt$hash`): what its verification costs. */
const paramsOf = (hash: string) => hash.split('$')[3];

describe.each(TEST_DIALECTS)('dummy hash after raising the argon2 parameters on %s', (dialect) => {
  // Compared by what each verification is asked to do, not by timing it: the cost of an argon2id
  // verification is fixed by the parameters of the hash it verifies against.
  it('costs an unknown account what an existing account that has not signed in since costs', async () => {
    const { admin, app, services, close } = await raisedServer(dialect);
    try {
      const verified = vi.spyOn(services.hasher, 'verify');
      const attempt = async (username: string) => {
        const response = await postJson(app, '/admin/auth/login', { school_id: admin.schoolId, username, password: `${PASSWORD}!` });
        expect(response.statusCode).toBe(401);
        return paramsOf(verified.mock.calls.at(-1)![0]);
      };
      const known = await attempt(admin.username);
      const unknown = await attempt('nobody');
      expect(verified).toHaveBeenCalledTimes(2);
      expect(known).toBe('m=19456,t=2,p=1');
      expect(unknown).toBe(known);
    } finally {
      await close();
    }
  });
});
