// The tokens of a SCIM filter or PATCH path, and a cursor over them whose errors say where.
import { badRequest, type ScimError, type ScimType } from './scim-error.js';

export interface Token {
  readonly kind: '(' | ')' | '[' | ']' | 'string' | 'word';
  readonly text: string;
  readonly at: number;
}

/**
 * Reads the tokens of one filter or path in order. The text is untrusted: its length is bounded
 * before it is split, and every problem is a 400 of the reader's `scimType` naming the character.
 */
export class TokenReader {
  private readonly tokens: readonly Token[];
  private index = 0;

  constructor(
    text: string,
    protected readonly scimType: ScimType,
    maxLength: number,
  ) {
    const noun = this.noun();
    if (text.length > maxLength) throw badRequest(scimType, `the ${noun} is longer than ${maxLength} characters`);
    if (text.trim() === '') throw badRequest(scimType, `the ${noun} is empty`);
    this.tokens = this.tokenize(text);
  }

  next(kind: Token['kind']): boolean {
    return this.tokens[this.index]?.kind === kind;
  }

  /** Whether the next token is a `.subAttr` (after a value path). */
  nextIsSubAttribute(): boolean {
    const token = this.tokens[this.index];
    return token?.kind === 'word' && token.text.startsWith('.');
  }

  atEnd(): boolean {
    return this.index >= this.tokens.length;
  }

  /** Trailing text is refused, never ignored: `userName eq "a" x` is not `userName eq "a"`. */
  end(): void {
    const token = this.tokens[this.index];
    if (token !== undefined) throw this.error(`unexpected "${token.text}"`, token);
  }

  /** Consumes a word matching `word` without case, or nothing. */
  protected keyword(word: string): boolean {
    const token = this.tokens[this.index];
    if (token?.kind !== 'word' || token.text.toLowerCase() !== word) return false;
    this.index += 1;
    return true;
  }

  /** Consumes the next token, which must be of `kind` (or one of them); `expected` says what was wanted. */
  protected take(kind: Token['kind'] | readonly Token['kind'][], expected: string): Token {
    const token = this.tokens[this.index];
    const kinds: readonly Token['kind'][] = typeof kind === 'string' ? [kind] : kind;
    if (token === undefined || !kinds.includes(token.kind)) throw this.error(`expected ${expected}${found(token)}`, token);
    this.index += 1;
    return token;
  }

  protected error(detail: string, token: Token | undefined): ScimError {
    const where = token === undefined ? 'at the end' : `at character ${token.at + 1}`;
    return badRequest(this.scimType, `${detail} ${where} of the ${this.noun()}`);
  }

  protected noun(): string {
    return this.scimType === 'invalidFilter' ? 'filter' : 'path';
  }

  private tokenize(text: string): Token[] {
    const tokens: Token[] = [];
    for (let at = 0; at < text.length; ) {
      const char = text.charAt(at);
      if (/\s/.test(char)) at += 1;
      else if ('()[]'.includes(char)) tokens.push({ kind: char as Token['kind'], text: char, at: at++ });
      else {
        const end = char === '"' ? closingQuote(text, at) : wordEnd(text, at);
        if (end < 0) throw this.error('unterminated string', { kind: 'string', text: '"', at });
        tokens.push({ kind: char === '"' ? 'string' : 'word', text: text.slice(at, end), at });
        at = end;
      }
    }
    return tokens;
  }
}

const found = (token: Token | undefined): string => (token === undefined ? '' : `, found "${token.text}"`);

/** Just past the closing quote, or -1; a backslash escapes the character after it. */
function closingQuote(text: string, start: number): number {
  for (let at = start + 1; at < text.length; at += 1) {
    if (text.charAt(at) === '\\') at += 1;
    else if (text.charAt(at) === '"') return at + 1;
  }
  return -1;
}

function wordEnd(text: string, start: number): number {
  let at = start;
  while (at < text.length && !/[\s()[\]"]/.test(text.charAt(at))) at += 1;
  return at;
}
