import { describe, expect, it } from 'vitest';
import { prune } from '../../src/auth/housekeeping.js';
import { TEST_DIALECTS } from '../helpers/database.js';
import { idpClient, linkedAdmin, reachCallback, useIdp, idpSuite } from '../helpers/sso.js';

describe.each(TEST_DIALECTS)('prune and single sign-on (%s)', (dialect) => {
  const suite = idpSuite({ clients: [idpClient()], users: { 'alice-sub': { email: 'a@district.example' } } });

  const count = async (table: 'sso_used_states' | 'sso_login_codes' | 'sso_callback_failures') =>
    Number((await suite.world.services.db.selectFrom(table).select((eb) => eb.fn.countAll().as('n')).executeTakeFirstOrThrow()).n);

  it('keeps used states, codes and failure windows while a rule needs them, then deletes them', async () => {
    await suite.open(dialect);
    await useIdp(suite.world, suite.idp);
    await linkedAdmin(suite.world, { subject: 'alice-sub' });
    await reachCallback(suite.world, 'alice-sub');
    await suite.world.app.inject({ method: 'GET', url: '/admin/auth/sso/callback?state=forged' });
    expect([await count('sso_used_states'), await count('sso_login_codes'), await count('sso_callback_failures')]).toEqual([1, 1, 1]);
    suite.world.clock.advance(59);
    expect((await prune(suite.world.services, { sessionDays: 7 })).ssoRows).toBe(0);
    suite.world.clock.advance(2);
    expect((await prune(suite.world.services, { sessionDays: 7 })).ssoRows).toBe(1);
    suite.world.clock.advance(600);
    expect((await prune(suite.world.services, { sessionDays: 7 })).ssoRows).toBe(2);
    expect([await count('sso_used_states'), await count('sso_login_codes'), await count('sso_callback_failures')]).toEqual([0, 0, 0]);
  });
});
