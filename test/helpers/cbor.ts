/**
 * The part of CBOR (RFC 8949) an authenticator writes: integers, byte and text strings, arrays
 * and maps. Maps keep insertion order, so a COSE key is encoded with its keys as given (the CTAP2
 * canonical order when the caller inserts them in that order). No floats, tags or indefinite
 * lengths: a test helper that cannot express them cannot produce them by accident.
 */
export type CborValue = number | string | Uint8Array | readonly CborValue[] | ReadonlyMap<CborValue, CborValue>;

const UNSIGNED = 0;
const NEGATIVE = 1;
const BYTES = 2;
const TEXT = 3;
const ARRAY = 4;
const MAP = 5;

export function encodeCbor(value: CborValue): Buffer {
  return Buffer.concat(encodeItem(value));
}

function encodeItem(value: CborValue): Buffer[] {
  if (typeof value === 'number') return [encodeInteger(value)];
  if (typeof value === 'string') {
    const text = Buffer.from(value, 'utf8');
    return [head(TEXT, text.length), text];
  }
  if (value instanceof Uint8Array) return [head(BYTES, value.length), Buffer.from(value)];
  if (isArray(value)) return [head(ARRAY, value.length), ...value.flatMap(encodeItem)];
  return [head(MAP, value.size), ...[...value].flatMap(([key, item]) => [...encodeItem(key), ...encodeItem(item)])];
}

function isArray(value: CborValue): value is readonly CborValue[] {
  return Array.isArray(value);
}

function encodeInteger(value: number): Buffer {
  if (!Number.isSafeInteger(value)) throw new TypeError(`CBOR: only safe integers are supported, not ${value}`);
  // A negative n is encoded as major type 1 with argument -1 - n.
  return value >= 0 ? head(UNSIGNED, value) : head(NEGATIVE, -1 - value);
}

/** The initial byte and argument of an item: the shortest form, as deterministic encoding asks. */
function head(major: number, argument: number): Buffer {
  const type = major << 5;
  if (argument < 24) return Buffer.from([type | argument]);
  if (argument < 0x100) return Buffer.from([type | 24, argument]);
  if (argument < 0x10000) {
    const out = Buffer.alloc(3);
    out[0] = type | 25;
    out.writeUInt16BE(argument, 1);
    return out;
  }
  if (argument < 0x100000000) {
    const out = Buffer.alloc(5);
    out[0] = type | 26;
    out.writeUInt32BE(argument, 1);
    return out;
  }
  const out = Buffer.alloc(9);
  out[0] = type | 27;
  out.writeBigUInt64BE(BigInt(argument), 1);
  return out;
}
