import { describe, expect, it } from 'vitest';
import { TEST_DIALECTS } from '../../helpers/database.js';
import { idpClient, idpSuite, linkedAdmin, reachCallback, useIdp } from '../../helpers/sso.js';

// Accounts whose e-mail address becomes `kate@district.example` (or its domain `kdistrict.example`)
// under Unicode case folding or compatibility normalisation, but is another address byte for byte.
const LOOKALIKES = {
  'kelvin-sign': '\u212Aate@district.example',
  'long-s': 'kate\u017F@district.example',
  'dotted-capital-i': 'kat\u0130e@district.example',
  'dotless-i': 'kat\u0131e@district.example',
  fullwidth: '\uFF2B\uFF21\uFF34\uFF25@district.example',
  'fullwidth-at-and-domain': 'kate\uFF20district.example',
} as const;

const USERS = {
  ...Object.fromEntries(Object.entries(LOOKALIKES).map(([sub, email]) => [sub, { email, email_verified: true }])),
  'kelvin-domain': { email: 'kate@\u212Adistrict.example', email_verified: true },
  'ascii-upper': { email: 'KATE@District.Example', email_verified: true },
  'kate-sub': { email: 'kate@kdistrict.example', email_verified: true },
};

describe.each(TEST_DIALECTS)('e-mail links are matched without Unicode case folding (%s)', (dialect) => {
  const suite = idpSuite({ clients: [idpClient()], users: USERS });

  async function signInAs(login: string): Promise<string> {
    const callback = await reachCallback(suite.world, login);
    return callback.location?.searchParams.has('code') === true ? 'signed in' : (callback.location?.searchParams.get('error') ?? `status ${callback.response.statusCode}`);
  }

  async function link() {
    return suite.world.services.db.selectFrom('sso_links').select(['email', 'subject']).executeTakeFirstOrThrow();
  }

  it.each(Object.keys(LOOKALIKES))('%s does not bind the link waiting for kate@district.example', async (login) => {
    await suite.open(dialect);
    await useIdp(suite.world, suite.idp);
    await linkedAdmin(suite.world, { email: 'kate@district.example' }, 'kate');
    expect(await signInAs(login)).toBe('access_denied');
    expect(await link()).toEqual({ email: 'kate@district.example', subject: null });
    const failure = await suite.world.services.db.selectFrom('events').select('detail').where('type', '=', 'sso.failure').executeTakeFirstOrThrow();
    expect(failure.detail).toBe('not_linked');
  });

  it('an address that differs only in ASCII case binds (operator and IdP may spell it either way)', async () => {
    await suite.open(dialect);
    await useIdp(suite.world, suite.idp);
    await linkedAdmin(suite.world, { email: 'Kate@DISTRICT.example' }, 'kate');
    expect(await link()).toEqual({ email: 'kate@district.example', subject: null });
    expect(await signInAs('ascii-upper')).toBe('signed in');
    expect(await link()).toEqual({ email: null, subject: 'ascii-upper' });
  });

  it('a domain that folds to an allowed one is refused by --domains', async () => {
    await suite.open(dialect);
    await useIdp(suite.world, suite.idp, { domains: 'kdistrict.example' });
    await linkedAdmin(suite.world, { subject: 'kelvin-domain' }, 'kate');
    await linkedAdmin(suite.world, { subject: 'kate-sub' }, 'kate2');
    expect(await signInAs('kelvin-domain')).toBe('access_denied');
    expect(await signInAs('kate-sub')).toBe('signed in');
  });
});
