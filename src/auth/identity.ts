/**
 * Canonical form used to compare school ids and usernames: NFKC, then full case folding, so that
 * "ADMIN", "admin" and "ａｄｍｉｎ" are one account. JavaScript has no casefold(): upper- then
 * lower-casing maps every case variant to one form (ß and ss, σ and ς included), and a final
 * NFKC keeps the result normalized.
 */
export function canonicalKey(text: string): string {
  return text.normalize('NFKC').toUpperCase().toLowerCase().normalize('NFKC');
}

/** Passwords are compared after NFKC, so the same password typed on another keyboard matches. */
export function normalizePassword(password: string): string {
  return password.normalize('NFKC');
}
