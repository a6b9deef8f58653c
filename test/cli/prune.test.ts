import { describe, expect } from 'vitest';
import { cliTest as test, ok, SLOW } from '../helpers/cli-workspace.js';

const PASSWORD = 'correct horse battery staple';

describe('school-auth prune', () => {
  test('--sessions-older-than 0 or SESSION_RETENTION_DAYS=0 keeps sessions the revocation feed still lists, and says so', SLOW, async ({ ws }) => {
    const app = await ws.app();
    await app.seedSchool('lincoln-high');
    await app.seedAdmin('lincoln-high', 'alice', PASSWORD);
    const session = await app.signIn({ school_id: 'lincoln-high', username: 'alice', password: PASSWORD });
    expect((await app.logout(session.refresh_token)).statusCode).toBe(204);

    const pruned = ok(await ws.run(['prune', '--sessions-older-than', '0']));
    expect(pruned.stdout).toMatch(/^deleted 0 sessions,/m);
    expect(pruned.stdout).toContain('kept sessions ended within the last 960 s');
    expect(pruned.stdout).toContain('ACCESS_TOKEN_TTL + 60 s');
    // Without flags, the settings apply: SESSION_RETENTION_DAYS (default 7) and AUDIT_RETENTION_DAYS.
    const bySetting = ok(await ws.run(['prune'], { env: { SESSION_RETENTION_DAYS: '0', AUDIT_RETENTION_DAYS: '0' } }));
    expect(bySetting.stdout).toMatch(/^deleted 0 sessions,.* 0 events,/m);
    expect(bySetting.stdout).toContain('kept sessions ended within the last 960 s');
    const unchanged = ok(await ws.run(['prune']));
    expect(unchanged.stdout).not.toContain('kept sessions ended');
  });
});
