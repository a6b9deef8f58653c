// Reading callgrind's dumps: instructions executed, in all and by what ran them.
import { readFileSync } from 'node:fs';

/** What ran an instruction, from the function's name and the object file it is in; first match wins. */
const KINDS = [
  ['argon2id (@node-rs/argon2)', (fn, ob) => ob.includes('argon2')],
  ['SQLite (better-sqlite3)', (fn, ob) => ob.includes('better_sqlite3')],
  ['JavaScript, compiled', (fn, ob) => ob === '???'],
  ['ECDSA and big numbers', (fn) => /ecp_|ecdsa|ECDSA|EC_|ec_|bn_|BN_/.test(fn)],
  ['SHA-256', (fn) => /sha256|SHA256/.test(fn)],
  ['OpenSSL, the rest', (fn) => /EVP|OSSL|ossl|CRYPTO|OPENSSL|evp_|ERR_|OBJ_|ASN1|asn1|RAND|rand_|DRBG|drbg|hmac|HMAC|sha512|SHA512/.test(fn)],
  ['V8 garbage collection', (fn) => /Scaveng|Heap::|MarkCompact|Sweep|Marking|Evacuat|NewSpace|PagedSpace|Remembered|SlotSet|Worklist|MemoryChunk|Marker/.test(fn)],
  ['V8 builtins', (fn) => fn.startsWith('Builtins_')],
  ['V8 compilers', (fn) => /compiler::|Compiler|Maglev|Baseline|Parser|Bytecode|Assembler|Zone/.test(fn)],
  ['V8 objects, strings and runtime', (fn) => fn.startsWith('v8::internal')],
  ['V8 API (what add-ons and Node call)', (fn) => fn.startsWith('v8::')],
  ['HTTP parser (llhttp)', (fn) => fn.includes('llhttp')],
  ['Node and libuv', (fn) => /^node::|^uv_|^uv__/.test(fn)],
  ['C library: memory, strings, threads', (fn) => /mem|malloc|free|_int_|str|pthread|futex|calloc/.test(fn)],
];

/**
 * Self cost (instructions) of every function in a callgrind output file (its default, compressed
 * format), grouped into KINDS, with `other` for the rest.
 */
export function instructionsByKind(file) {
  const names = { ob: new Map(), fn: new Map() };
  const byKind = new Map([...KINDS.map(([kind]) => [kind, 0]), ['other', 0]]);
  let kind = 'other';
  let ob = '';
  let afterCalls = false;
  let total = 0;
  for (const line of readFileSync(file, 'utf8').split('\n')) {
    const named = /^(c?)(ob|fn)=(?:\((\d+)\))?\s*(.*)$/.exec(line);
    if (named !== null) {
      const [, called, what, id, text] = named;
      if (id !== undefined && text !== '') names[what].set(id, text);
      const name = id === undefined ? text : names[what].get(id) ?? text;
      if (called !== '') continue;
      if (what === 'ob') ob = name;
      else kind = KINDS.find(([, test]) => test(name, ob))?.[0] ?? 'other';
      continue;
    }
    if (line.startsWith('calls=')) {
      afterCalls = true;
      continue;
    }
    if (!/^[0-9+\-*]/.test(line)) continue;
    // The line after calls= is the call's inclusive cost: the callee counts it as its own.
    if (afterCalls) {
      afterCalls = false;
      continue;
    }
    const cost = Number(line.split(' ')[1] ?? 0);
    byKind.set(kind, byKind.get(kind) + cost);
    total += cost;
  }
  return { total, byKind };
}
