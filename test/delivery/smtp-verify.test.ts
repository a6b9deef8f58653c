import { afterEach, describe, expect, it } from 'vitest';
import { createMailer, type Mailer } from '../../src/delivery/email-send.js';
import { freePort } from '../helpers/free-port.js';
import { SMTP_FROM, SMTP_PASSWORD, smtpUrl, startSmtpServer, type TestSmtpServer } from '../helpers/smtp-server.js';

const open: { mailers: Mailer[]; servers: TestSmtpServer[] } = { mailers: [], servers: [] };
afterEach(async () => {
  open.mailers.splice(0).forEach((mailer) => mailer.close());
  await Promise.all(open.servers.splice(0).map((server) => server.close()));
});

function mailer(url: string): Mailer {
  const made = createMailer({ url, from: SMTP_FROM }, 2_000);
  open.mailers.push(made);
  return made;
}

describe('the mail server checked at start (Mailer.verify)', () => {
  it('passes against a server that upgrades and takes the login, and sends nothing', async () => {
    const server = await startSmtpServer();
    open.servers.push(server);
    expect(await mailer(server.url).verify()).toBeUndefined();
    expect(server.logins).toEqual([{ user: 'mailer', secure: true }]);
    expect(server.received).toEqual([]);
  });

  it('names the problem: nobody listening, a wrong password', async () => {
    const down = await freePort();
    expect(await mailer(smtpUrl(down)).verify()).toMatch(/ECONNREFUSED/);
    const server = await startSmtpServer();
    open.servers.push(server);
    expect(await mailer(server.url.replace(SMTP_PASSWORD, 'wrong-password')).verify()).toMatch(/535|[Ii]nvalid/);
  });
});
