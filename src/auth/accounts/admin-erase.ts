import { nowSeconds } from '../../runtime/clock.js';
import { inTransaction, type Db } from '../../db/database.js';
import { digestUnsealedEvents, earlierFormEvents, eraseEvents, hashBefore, eraseNotifications, eraseSessionClients, lockAdmin, markAdminErased } from '../../db/queries/erasure.js';
import { GENESIS_HASH } from '../audit/canonical-event.js';
import { earlierFormLink, erasureDetail, ERASURE_TYPE } from '../audit/erasure-record.js';
import type { AppContext } from '../context.js';
import { recordEvent, type RequestContext } from '../events.js';
import { secureRandomBytes } from '../secure-random.js';
import { deleteAdmin, type DeletedAdmin } from './admin-delete.js';

type Deps = Pick<AppContext, 'db' | 'clock'>;

const salt = () => secureRandomBytes(32).toString('hex');

/** The admin's earlier-form events with what the erasure record commits to for each. */
async function earlierFormLinks(db: Db, adminId: string): Promise<{ seq: number; link: string }[]> {
  const links = [];
  for (const event of await earlierFormEvents(db, adminId)) {
    const previous = event.seq === 1 ? GENESIS_HASH : await hashBefore(db, event.seq);
    if (previous === undefined) throw new Error(`the hash before event seq ${event.seq} is missing: run school-auth events verify`);
    links.push({ seq: event.seq, link: earlierFormLink(previous, event) });
  }
  return links;
}

/**
 * Deletes the admin (if not yet) and erases their personal data, in one transaction: the username,
 * e-mail, client addresses, user agents and details of every event about them, of their sessions
 * and of their notifications. The chain still verifies: events since migration 018 are sealed
 * through the digest of those fields, and the `admin.erased` event, itself sealed, records the
 * erasure (and lists the seqs of earlier-form events, which cannot be re-hashed once emptied).
 * The admin's row is locked first, so an event written about them meanwhile is either erased here
 * or stored erased (db/queries/events.ts). `false` when the admin was already erased.
 */
export function eraseAdmin(deps: Deps, admin: DeletedAdmin & { readonly deleted: boolean }, context: RequestContext, by: string): Promise<boolean> {
  return inTransaction(deps.db, async (trx) => {
    const inside = { ...deps, db: trx };
    await lockAdmin(trx, admin.id);
    if (!admin.deleted) await deleteAdmin(inside, admin, context, by);
    await digestUnsealedEvents(trx, admin.id, salt);
    const earlier = await earlierFormLinks(trx, admin.id);
    const erased = await eraseEvents(trx, admin.id, deps.clock.now());
    await eraseSessionClients(trx, admin.id);
    await eraseNotifications(trx, admin.id);
    // Recorded before the admin is marked erased: an event about them written after that is stored erased.
    await recordEvent(trx, deps.clock, context, { type: ERASURE_TYPE, schoolId: admin.school_key, adminId: admin.id, detail: erasureDetail(erased, earlier) });
    return markAdminErased(trx, admin.id, nowSeconds(deps.clock));
  });
}
