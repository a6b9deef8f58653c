/** Properties of the mistyped-name detection, over generated names, values and .env files. */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { KNOWN_SETTINGS } from '../../src/config/known-settings.js';
import { settingNotices } from '../../src/config/setting-notices.js';

const known = fc.constantFrom(...KNOWN_SETTINGS);
const plainValue = fc.stringMatching(/^[A-Za-z0-9:/._,@-]{0,40}$/);
/** A value no notice could contain by chance. */
const secret = fc.stringMatching(/^[a-f0-9]{24}$/).map((hex) => `s3cret${hex}`);
const letters = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ_';

/** One edit of a name: a letter dropped, replaced or added, or two neighbours swapped. */
const oneEdit = (name: string) =>
  fc.tuple(fc.nat({ max: name.length - 1 }), fc.constantFrom(...letters), fc.constantFrom('drop', 'replace', 'add', 'swap')).map(([at, letter, edit]) => {
    if (edit === 'drop') return name.slice(0, at) + name.slice(at + 1);
    if (edit === 'replace') return name.slice(0, at) + letter + name.slice(at + 1);
    if (edit === 'add') return name.slice(0, at) + letter + name.slice(at);
    const next = Math.min(at + 1, name.length - 1);
    return name.slice(0, at) + name[next]! + name[at]! + name.slice(next + 1);
  });

describe('mistyped-name detection', () => {
  it('never names a known setting, from the environment or from .env', () => {
    fc.assert(
      fc.property(fc.array(fc.tuple(known, plainValue), { maxLength: 12 }), (pairs) => {
        const env = Object.fromEntries(pairs);
        const dotEnv = pairs.map(([name, value]) => `${name}=${value}`).join('\n');
        expect(settingNotices(env, dotEnv)).toEqual([]);
      }),
    );
  });

  it('names one edit of a setting of five letters or more, suggesting a setting', () => {
    const typo = known.filter((name) => name.length >= 5).chain(oneEdit).filter((name) => !KNOWN_SETTINGS.includes(name) && /^[A-Z_][A-Z0-9_]*$/.test(name));
    fc.assert(
      fc.property(typo, (name) => {
        const notices = settingNotices({ [name]: 'x' }, undefined);
        expect(notices).toHaveLength(1);
        expect(KNOWN_SETTINGS).toContain(notices[0]!.suggestion);
      }),
    );
  });

  it('never shows a value, whatever the line', () => {
    const name = fc.oneof(known, known.chain(oneEdit), fc.stringMatching(/^[A-Za-z_][A-Za-z0-9_]{0,20}$/));
    const line = fc.tuple(name, secret, fc.constantFrom('=', ' = ', ' ', ': ', '="', "='")).map(([n, value, glue]) => `${n}${glue}${value}`);
    fc.assert(
      fc.property(fc.array(fc.tuple(name, secret), { maxLength: 6 }), fc.array(fc.oneof(line, secret), { maxLength: 8 }), (pairs, lines) => {
        const shown = settingNotices(Object.fromEntries(pairs), lines.join('\n')).map((notice) => notice.text).join('\n');
        for (const [, value] of pairs) expect(shown).not.toContain(value);
        for (const text of lines) expect(shown).not.toContain(text.match(/s3cret[a-f0-9]{24}/)![0]);
      }),
    );
  });
});
