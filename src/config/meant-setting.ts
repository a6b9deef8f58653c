import { editDistance } from './edit-distance.js';
import { KNOWN_SETTINGS, SETTING_PREFIXES } from './known-settings.js';

/** A name a shell or a .env file can define; anything else is not taken for one of ours. */
const VARIABLE_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

/**
 * Edits allowed between a name and a setting for the name to count as a typo of it: one for
 * short names, two from eight characters. A fixed two would take HOME and USER, present in every
 * environment, for typos of HOST and ISSUER.
 */
function allowedEdits(a: string, b: string): number {
  return Math.min(2, Math.floor(Math.min(a.length, b.length) / 4));
}

function closest(name: string, candidates: readonly string[]): { setting: string; distance: number } | undefined {
  let best: { setting: string; distance: number } | undefined;
  for (const setting of candidates) {
    const distance = editDistance(name, setting);
    if (best === undefined || distance < best.distance) best = { setting, distance };
  }
  return best;
}

/**
 * The setting an unknown variable was probably meant to be: the closest one when the name is
 * within a typo of it (in any case: `Port`), or when it begins with the first word of our
 * settings (`SSO_CLIENT_SECRET`), the closest of those sharing that word. Undefined for a known
 * setting and for what looks like another program's variable.
 */
export function meantSetting(name: string): string | undefined {
  if (KNOWN_SETTINGS.includes(name) || !VARIABLE_NAME.test(name)) return undefined;
  const upper = name.toUpperCase();
  const nearest = closest(upper, KNOWN_SETTINGS);
  if (nearest !== undefined && nearest.distance <= allowedEdits(upper, nearest.setting)) return nearest.setting;
  const prefix = SETTING_PREFIXES.find((candidate) => upper.startsWith(candidate));
  if (prefix === undefined) return undefined;
  return closest(upper, KNOWN_SETTINGS.filter((setting) => setting.startsWith(prefix)))?.setting;
}
