import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect } from 'vitest';
import { CLI_MAIN } from '../helpers/cli-run.js';
import { cliTest as test, ok, SLOW } from '../helpers/cli-workspace.js';
import { ServerProcess } from '../helpers/server-process.js';
import { sealAll } from '../helpers/audit.js';

async function until(condition: () => boolean, what: string, timeoutMs = 15_000): Promise<void> {
  for (const deadline = Date.now() + timeoutMs; !condition(); await sleep(100)) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
  }
}

describe('school-auth events follow', () => {
  test('prints events as they are sealed, not before, and stops cleanly on SIGTERM', SLOW, async ({ ws }) => {
    const app = await ws.app();
    await app.seedSchool('lincoln-high');
    await sealAll(app.services);
    ok(await ws.run(['events', 'verify']));

    const follow = ServerProcess.launch(process.execPath, [CLI_MAIN, 'events', 'follow'], { cwd: ws.root, env: { DATA_DIR: ws.dataDir } });
    ws.track(follow.child);
    // Give it time to start and poll: the event sealed before it started is not printed.
    await sleep(2500);
    expect(follow.stdout).toBe('');

    expect((await app.login({ school_id: 'lincoln-high', username: 'mallory', password: 'guess' })).statusCode).toBe(401);
    await sleep(1500);
    expect(follow.stdout).toBe('');
    await sealAll(app.services);
    await until(() => follow.stdout.includes('\n'), 'the sealed event');
    expect(JSON.parse(follow.stdout)).toMatchObject({ seq: 3, type: 'login.failure', username: 'mallory', school_id: 'lincoln-high' });

    expect(await follow.stop('SIGTERM')).toEqual({ code: 0, signal: null });
  });
});
