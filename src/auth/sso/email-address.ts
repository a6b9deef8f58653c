/**
 * How an e-mail address of an IdP is compared with one an operator linked, and a domain with a
 * school's allowlist. JavaScript's toLowerCase() folds Unicode: KELVIN SIGN (U+212A) becomes `k`,
 * LATIN SMALL LETTER LONG S (U+017F) stays but upper-cases to `S`, fullwidth letters have case
 * too, so an IdP account named `\u212Aate@district.example` would match the link waiting for
 * `kate@district.example`. Only ASCII letters are folded here (as DNS names are, RFC 4343), and
 * an address with any other character is kept exactly as it is: it matches byte for byte or not
 * at all.
 */

const ASCII_ONLY = /^[\x20-\x7e]*$/;

/** A-Z to a-z and nothing else. */
function asciiLowerCase(text: string): string {
  return text.replace(/[A-Z]/g, (letter) => letter.toLowerCase());
}

/**
 * The form in which addresses are stored and compared: an all-ASCII address lower-cased in ASCII
 * (mailbox providers treat the case of the local part as insignificant), any other address
 * unchanged. Both sides go through this, so two addresses match exactly when their forms are equal.
 */
export function emailKey(address: string): string {
  return ASCII_ONLY.test(address) ? asciiLowerCase(address) : address;
}

/** The domain of an address in the form the allowlist holds (ASCII, lower case), or undefined. */
export function emailDomainOf(address: string): string | undefined {
  const at = address.lastIndexOf('@');
  if (at < 0) return undefined;
  return emailKey(address.slice(at + 1));
}
