/**
 * Text neither database can take as it is: NUL (PostgreSQL text cannot hold it) and UTF-16
 * surrogates without their pair (no encoding can store them; drivers would silently turn them
 * into U+FFFD, so two different inputs would compare equal).
 */
const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g;
const UNSTORABLE = new RegExp(`\\0|${LONE_SURROGATE.source}`);
const UNSTORABLE_ALL = new RegExp(UNSTORABLE.source, 'g');

/** Whether `text` reaches a query as it is, the same on SQLite and PostgreSQL. */
export function isStorableText(text: string): boolean {
  return !UNSTORABLE.test(text);
}

/** What kind of unstorable character `text` holds first, if any. */
export function unstorableKind(text: string): 'nul' | 'surrogate' | undefined {
  const found = UNSTORABLE.exec(text);
  if (found === null) return undefined;
  return found[0] === '\0' ? 'nul' : 'surrogate';
}

/**
 * Text that came from a client, made storable on both databases: NUL and lone surrogates become
 * U+FFFD (the audit trail shows that something was there).
 */
export function storableText<T extends string | null | undefined>(text: T): T {
  if (typeof text !== 'string' || isStorableText(text)) return text;
  return text.replace(UNSTORABLE_ALL, '\uFFFD') as T;
}

/** `text` with each lone surrogate replaced by U+FFFD (String.prototype.toWellFormed). */
export function wellFormedText(text: string): string {
  return text.replace(LONE_SURROGATE, '\uFFFD');
}
