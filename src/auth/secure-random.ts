import { randomFillSync } from 'node:crypto';

const POOL_SIZE = 4096;
const pool = Buffer.alloc(POOL_SIZE);
let offset = POOL_SIZE;

/**
 * `size` bytes from the CSPRNG (OpenSSL's, as `randomBytes`), drawn from a buffer refilled 4 KiB
 * at a time. Every call into the generator costs the same whatever its size (a system call among
 * it, OpenSSL's fork check), and a rotation draws twice; Node's own `randomUUID` pools the same
 * way (bench/README.md, the ledger).
 * Invariants: each byte is handed out once and wiped from the pool as it is, so the pool never
 * holds a value already in use; the caller's buffer has an ArrayBuffer of its own, of exactly
 * `size` bytes (a view into a shared slab would hand out other bytes through `.buffer`).
 * Each worker thread has its own pool (module state is per thread), and Node never forks.
 */
export function secureRandomBytes(size: number): Buffer {
  if (size > POOL_SIZE) return randomFillSync(Buffer.alloc(size));
  if (offset + size > POOL_SIZE) {
    randomFillSync(pool);
    offset = 0;
  }
  const bytes = Buffer.alloc(size);
  pool.copy(bytes, 0, offset, offset + size);
  pool.fill(0, offset, offset + size);
  offset += size;
  return bytes;
}
