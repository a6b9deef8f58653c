import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { prune } from '../../src/auth/housekeeping.js';
import { TEST_DIALECTS } from '../helpers/database.js';
import { TestIdp } from '../helpers/oidc-idp.js';
import { idpClient, linkedAdmin, openSsoApp, reachCallback, useIdp, type SsoApp } from '../helpers/sso.js';

describe.each(TEST_DIALECTS)('prune and single sign-on (%s)', (dialect) => {
  let idp: TestIdp;
  let world: SsoApp;
  beforeAll(async () => {
    idp = await TestIdp.start({ clients: [idpClient()], users: { 'alice-sub': { email: 'a@district.example' } } });
  });
  afterAll(() => idp.close());
  afterEach(() => world.close());

  const count = async (table: 'sso_used_states' | 'sso_login_codes' | 'sso_callback_failures') =>
    Number((await world.services.db.selectFrom(table).select((eb) => eb.fn.countAll().as('n')).executeTakeFirstOrThrow()).n);

  it('keeps used states, codes and failure windows while a rule needs them, then deletes them', async () => {
    world = await openSsoApp(dialect);
    await useIdp(world, idp);
    await linkedAdmin(world, { subject: 'alice-sub' });
    await reachCallback(world, 'alice-sub');
    await world.app.inject({ method: 'GET', url: '/admin/auth/sso/callback?state=forged' });
    expect([await count('sso_used_states'), await count('sso_login_codes'), await count('sso_callback_failures')]).toEqual([1, 1, 1]);
    world.clock.advance(59);
    expect((await prune(world.services, { sessionDays: 7 })).ssoRows).toBe(0);
    world.clock.advance(2);
    expect((await prune(world.services, { sessionDays: 7 })).ssoRows).toBe(1);
    world.clock.advance(600);
    expect((await prune(world.services, { sessionDays: 7 })).ssoRows).toBe(2);
    expect([await count('sso_used_states'), await count('sso_login_codes'), await count('sso_callback_failures')]).toEqual([0, 0, 0]);
  });
});
