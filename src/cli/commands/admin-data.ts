import type { Command } from 'commander';
import { exportAdmin } from '../../auth/accounts/admin-export.js';
import { removeAdmin } from '../../auth/accounts/admin-removal.js';
import { sealBatch } from '../../auth/audit/sealer.js';
import { say, withServices } from '../run.js';

type Identify = (command: Command) => Command;
interface AdminOptions {
  school: string;
  username: string;
}

/** `admin delete [--erase]` and `admin export`: what a district's deletion and access requests need. */
export function registerAdminDataCommands(admin: Command, identify: Identify): void {
  identify(admin.command('delete').description('delete the admin: every session ends (in the revocation feed), factors, links, addresses and throttling state go'))
    .option('--erase', "also erase their personal data from the audit trail, sessions and notifications (the trail still verifies); works on an admin deleted before too")
    .action((options: AdminOptions & { erase?: boolean }) =>
      withServices(async (services) => {
        const done = await removeAdmin(services, { schoolId: options.school, username: options.username }, options.erase === true);
        // Sealed at once: until its admin.erased event is sealed, events verify names the erased events.
        if (done === 'erased') while (((await sealBatch(services))?.events ?? 0) > 0);
        say(done === 'erased' ? `admin ${JSON.stringify(options.username)} deleted and their personal data erased` : `admin ${JSON.stringify(options.username)} deleted`);
      }),
    );

  identify(admin.command('export').description('everything kept about the admin, as JSON on standard output (never a secret)')).action((options: AdminOptions) =>
    withServices(async (services) => {
      process.stdout.write(`${JSON.stringify(await exportAdmin(services, { schoolId: options.school, username: options.username }), null, 2)}\n`);
    }, 'none'),
  );
}
