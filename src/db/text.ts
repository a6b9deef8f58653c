/**
 * Text that came from a client, made storable on both databases: PostgreSQL text cannot hold NUL,
 * so it becomes U+FFFD (the audit trail shows that something was there).
 */
export function storableText<T extends string | null | undefined>(text: T): T {
  if (typeof text !== 'string' || !text.includes('\0')) return text;
  return text.replaceAll('\0', '\uFFFD') as T;
}
