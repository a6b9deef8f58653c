import { describe, expect, it } from 'vitest';
import { addWebhook } from '../../../src/delivery/webhooks.js';
import { emailsOf } from '../../../src/db/queries/admin-emails.js';
import { TEST_DIALECTS } from '../../helpers/database.js';
import { idpClient, idpSuite, linkedAdmin, signInThroughIdp, useIdp } from '../../helpers/sso.js';

const USERS = {
  'alice-sub': { email: 'Alice@District.example', email_verified: true },
  'bob-sub': { email: 'bob@district.example', email_verified: false },
};

describe.each(TEST_DIALECTS)("the IdP's verified address tells an SSO admin of changes (%s)", (dialect) => {
  const suite = idpSuite({ clients: [idpClient()], users: USERS });

  it('a sign-in with a verified address stores it, and the binding of the link notifies at it', async () => {
    await suite.open(dialect, { WEBHOOK_ALLOW_HTTP_LOOPBACK: 'true' });
    await useIdp(suite.world, suite.idp);
    await linkedAdmin(suite.world, { email: 'alice@district.example' });
    await addWebhook(suite.world.services, { url: 'http://127.0.0.1:9/hook' });
    expect((await signInThroughIdp(suite.world, 'alice-sub')).statusCode).toBe(200);
    const admin = await suite.world.services.db.selectFrom('admins').select('id').where('username', '=', 'alice').executeTakeFirstOrThrow();
    expect(await emailsOf(suite.world.services.db, admin.id)).toEqual(['alice@district.example']);
    const rows = await suite.world.services.db.selectFrom('outbox').select(['type', 'channel']).orderBy('channel').execute();
    expect(rows).toEqual([
      { type: 'sso.linked', channel: 'email' },
      { type: 'sso.linked', channel: 'webhook' },
    ]);
  });

  it('an unverified address is not stored', async () => {
    await suite.open(dialect);
    await useIdp(suite.world, suite.idp);
    await linkedAdmin(suite.world, { subject: 'bob-sub' }, 'bob');
    expect((await signInThroughIdp(suite.world, 'bob-sub')).statusCode).toBe(200);
    expect(await suite.world.services.db.selectFrom('admin_emails').selectAll().execute()).toEqual([]);
  });
});
