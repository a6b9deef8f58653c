/**
 * Characters a terminal acts on rather than shows: C0 controls (ESC starts escape sequences, CR
 * and LF move the cursor), DEL, C1 controls (U+009B is a one-byte CSI), line and paragraph
 * separators and the bidirectional controls that reorder what is shown (U+202E and friends).
 * Text from unauthenticated clients (a username typed at the login) reaches the operator's
 * terminal through `events`: none of these may be printed as they are.
 */
// eslint-disable-next-line no-control-regex -- matching control characters is the point
const TERMINAL_CONTROL = /[\u0000-\u001f\u007f-\u009f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]/g;

/** The controls JSON.stringify writes raw (it escapes C0 itself; the C0 left are its own layout). */
const RAW_IN_JSON = /[\u007f-\u009f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]/g;

const SHORT_ESCAPES: Record<string, string> = { '\n': '\\n', '\r': '\\r', '\t': '\\t' };

function escapeOne(char: string): string {
  const short = SHORT_ESCAPES[char];
  if (short !== undefined) return short;
  const code = char.charCodeAt(0);
  return code <= 0xff ? `\\x${code.toString(16).padStart(2, '0')}` : `\\u${code.toString(16).padStart(4, '0')}`;
}

/**
 * A table cell that shows every control character as an escape (`\x1b`, `\n`, `\u202e`), so one
 * cell can neither start a new row nor change the terminal. Backslashes are doubled first, so an
 * escape shown is never ambiguous with the same characters typed literally.
 */
export function escapeForTerminal(text: string): string {
  return text.replaceAll('\\', '\\\\').replace(TERMINAL_CONTROL, escapeOne);
}

/**
 * JSON for a terminal or a pipe: the same values once parsed, but the controls that
 * JSON.stringify leaves raw (DEL, C1, bidi, separators) are written as \uXXXX escapes. They can
 * only occur inside strings, where that escape means the same character.
 */
export function terminalSafeJson(value: unknown): string {
  return JSON.stringify(value, null, 2).replace(RAW_IN_JSON, (char) => `\\u${char.charCodeAt(0).toString(16).padStart(4, '0')}`);
}
