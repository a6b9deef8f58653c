import QRCode from 'qrcode';
import { describe, expect, it } from 'vitest';
import { seedAdmin, signIn, postJson, useTestApps } from '../../helpers/app.js';
import { bearer } from '../../helpers/mfa.js';

/**
 * The dark modules an SVG of the qrcode library draws: one path of horizontal runs, `M x y.5`
 * (absolute) or `m dx dy` (relative) then `h n` for n dark modules from x on row floor(y).
 */
function darkModules(svg: string): Set<string> {
  const path = /<path stroke="#000000" d="([^"]+)"\/>/.exec(svg)?.[1] ?? '';
  const dark = new Set<string>();
  let x = 0;
  let y = 0;
  for (const [, command = '', args = ''] of path.matchAll(/([MmHhVv])([^MmHhVv]*)/g)) {
    const numbers = args.trim().split(/[\s,]+/).filter((text) => text !== '').map(Number);
    if (command === 'M') [x, y] = [numbers[0] ?? 0, numbers[1] ?? 0];
    if (command === 'm') [x, y] = [x + (numbers[0] ?? 0), y + (numbers[1] ?? 0)];
    if (command === 'h') {
      for (let column = x; column < x + (numbers[0] ?? 0); column++) dark.add(`${column},${Math.floor(y)}`);
      x += numbers[0] ?? 0;
    }
  }
  return dark;
}

describe('TOTP enrollment answers carry the QR code of the otpauth URI', () => {
  const open = useTestApps('sqlite');

  it('qr_svg is a well-formed SVG whose modules are the QR code of otpauth_uri', async () => {
    const t = await open();
    const admin = await seedAdmin(t.services);
    const { access_token } = await signIn(t.app, admin);
    const started = await postJson(t.app, '/admin/auth/mfa/totp', {}, bearer(access_token));
    expect(started.statusCode, started.body).toBe(200);
    const { otpauth_uri, qr_svg } = started.json<{ otpauth_uri: string; qr_svg: string }>();

    // The whole document: one svg element holding the background and the modules, nothing else.
    expect(qr_svg).toMatch(/^<svg xmlns="http:\/\/www\.w3\.org\/2000\/svg" viewBox="0 0 (\d+) \1" shape-rendering="crispEdges"><path fill="#ffffff" d="[^"]+"\/><path stroke="#000000" d="[Mmh\d. ]+"\/><\/svg>\n?$/);

    const { modules } = QRCode.create(otpauth_uri, { errorCorrectionLevel: 'M' });
    const margin = (Number(/viewBox="0 0 (\d+)/.exec(qr_svg)?.[1]) - modules.size) / 2;
    const expected = new Set<string>();
    for (let row = 0; row < modules.size; row++) {
      for (let column = 0; column < modules.size; column++) if (modules.get(row, column)) expected.add(`${column + margin},${row + margin}`);
    }
    expect(darkModules(qr_svg)).toEqual(expected);
  });
});
