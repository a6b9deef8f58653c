import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect } from 'vitest';
import { cliTest as test, ok, type Workspace } from '../helpers/cli-workspace.js';
import { sealAll } from '../helpers/audit.js';

const EVENTS = 200_000;
const HEAP_MIB = 48;

/**
 * Runs `school-auth ...args` with the JavaScript heap capped at HEAP_MIB, and returns its stdout's
 * size and line count and its peak RSS (KiB).
 */
async function measured(ws: Workspace, args: string[]): Promise<{ bytes: number; lines: number; lastLine: string; maxRssKib: number }> {
  const probe = join(ws.root, 'report-rss.cjs');
  writeFileSync(probe, "process.on('exit', () => require('node:fs').writeSync(2, `maxrss_kib=${process.resourceUsage().maxRSS}\\n`));\n");
  const result = ok(await ws.run(args, { env: { NODE_OPTIONS: `--require ${probe} --max-old-space-size=${HEAP_MIB}` }, timeoutMs: 180_000 }));
  const maxRssKib = Number(/maxrss_kib=(\d+)/.exec(result.stderr)?.[1]);
  const lines = result.stdout.trimEnd().split('\n');
  return { bytes: Buffer.byteLength(result.stdout), lines: lines.length, lastLine: lines.at(-1) ?? '', maxRssKib };
}

describe('events export in constant memory', () => {
  test(`exporting ${EVENTS.toLocaleString('en')} events takes no more memory than exporting 1,000`, { timeout: 300_000 }, async ({ ws }) => {
    const app = await ws.app();
    const { db } = app.services;
    // Only the events below: the signing key's creation at start is an event too.
    await db.deleteFrom('events').execute();
    const at = Date.now() - 86_400_000;
    for (let start = 0; start < EVENTS; start += 500) {
      const rows = Array.from({ length: 500 }, (_, i) => ({
        at: at + start + i,
        type: 'login.failure',
        school_id: 'lincoln-high',
        username: `user-${start + i}`,
        admin_id: null,
        session_id: null,
        ip: '192.0.2.10',
        user_agent: 'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120.0 Safari/537.36',
        detail: 'unknown user',
      }));
      await db.insertInto('events').values(rows).execute();
    }
    await sealAll(app.services);

    const small = await measured(ws, ['events', 'export', '--since', '1', '--until', '1000']);
    const large = await measured(ws, ['events', 'export', '--since', '1']);
    expect(small.lines).toBe(1000);
    expect(large.lines).toBe(EVENTS);
    expect(JSON.parse(large.lastLine)).toMatchObject({ seq: EVENTS, username: `user-${EVENTS - 1}` });
    // The export is larger than the heap it ran in, so it cannot have been held whole; and its
    // peak memory grew by far less than the export's size over the 1,000-event export's (the bound
    // leaves room for the garbage a capped heap may hold before it collects).
    expect(large.bytes).toBeGreaterThan(HEAP_MIB * 1024 * 1024);
    expect(small.maxRssKib).toBeGreaterThan(0);
    expect(large.maxRssKib - small.maxRssKib).toBeLessThan(large.bytes / 1024 / 2);

    const verified = await measured(ws, ['events', 'verify']);
    expect(verified.lastLine).toMatch(new RegExp(`^ok: ${EVENTS} sealed events and ${EVENTS / 1000} checkpoints checked$`));
    expect(verified.maxRssKib - small.maxRssKib).toBeLessThan(large.bytes / 1024 / 2);
  });
});
