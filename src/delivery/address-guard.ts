import { lookup, type LookupAddress, type LookupAllOptions } from 'node:dns';
import { isIP, type LookupFunction } from 'node:net';
import ipaddr from 'ipaddr.js';

/** Which addresses a webhook may reach: public ones, and what WEBHOOK_ALLOW_PRIVATE names. */
export interface AddressPolicy {
  readonly allowPrivate: readonly string[];
}

export class RefusedAddressError extends Error {
  readonly code = 'ERR_WEBHOOK_ADDRESS_REFUSED';
}

/** Whether `address` is public (ipaddr.js's `unicast` range) or inside a range the policy names. */
export function isReachable(address: string, policy: AddressPolicy): boolean {
  const parsed = ipaddr.process(address);
  if (parsed.range() === 'unicast') return true;
  return policy.allowPrivate.some((entry) => {
    if (entry.includes('/')) {
      const range = ipaddr.parseCIDR(entry);
      return range[0].kind() === parsed.kind() && parsed.match(range);
    }
    return isIP(entry) !== 0 && ipaddr.process(entry).toString() === parsed.toString();
  });
}

/** Whether the URL's host itself is named in WEBHOOK_ALLOW_PRIVATE (then any address it resolves to is allowed). */
export function isNamedHost(hostname: string, policy: AddressPolicy): boolean {
  return isIP(hostname) === 0 && policy.allowPrivate.includes(hostname.toLowerCase());
}

/**
 * A `lookup` for the HTTP client that refuses a name resolving to an address that is not
 * reachable: checked on the address the socket then connects to, so DNS cannot answer one
 * address to a check and another to the connection.
 */
export function guardedLookup(policy: AddressPolicy): LookupFunction {
  return (hostname, options, callback) => {
    const all: LookupAllOptions = { ...options, all: true };
    lookup(hostname, all, (error, addresses: LookupAddress[]) => {
      if (error !== null) return callback(error, '', 4);
      const refused = addresses.find((entry) => !isReachable(entry.address, policy));
      if (refused !== undefined) {
        return callback(new RefusedAddressError(`${hostname} resolves to ${refused.address}, a private address: name it in WEBHOOK_ALLOW_PRIVATE to allow it`), '', 4);
      }
      const [first] = addresses;
      if (first === undefined) return callback(new RefusedAddressError(`${hostname} resolves to no address`), '', 4);
      if ((options as { all?: boolean }).all === true) return (callback as unknown as (e: null, a: LookupAddress[]) => void)(null, addresses);
      return callback(null, first.address, first.family);
    });
  };
}
