/**
 * A sealer killed with SIGKILL while it seals (`node dist/cli/main.js serve`; `npm run build`
 * first): a batch is one transaction, so what the crash leaves is a chain ending exactly at its
 * last checkpoint, and a restarted sealer continues it without a gap or a duplicate.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import SQLite from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import { runCli } from '../helpers/cli-run.js';
import { ServerProcess } from '../helpers/server-process.js';

const EVENTS = 200_000;

function chainState(file: string) {
  const db = new SQLite(file, { readonly: true, fileMustExist: true });
  try {
    return {
      sealer: db.prepare('select seq, checkpoint_seq from audit_sealer').get() as { seq: number; checkpoint_seq: number },
      seqs: db.prepare('select count(seq) as sealed, count(distinct seq) as distinct_seqs, coalesce(min(seq), 0) as first, coalesce(max(seq), 0) as last from events').get() as {
        sealed: number;
        distinct_seqs: number;
        first: number;
        last: number;
      },
    };
  } finally {
    db.close();
  }
}

describe('the audit sealer killed in the middle of sealing', () => {
  const dir = mkdtempSync(join(tmpdir(), 'school-auth-audit-kill-'));
  const file = join(dir, 'data', 'school-auth.sqlite');
  const env = { DATA_DIR: join(dir, 'data'), AUDIT_SEAL_INTERVAL: '1', LOG_LEVEL: 'warn' };
  let server: ServerProcess | undefined;
  afterEach(() => {
    server?.kill();
    rmSync(dir, { recursive: true, force: true });
  });

  it('leaves the chain at its last checkpoint; a restart seals the rest without gap or duplicate', async () => {
    expect((await runCli(['migrate'], { cwd: dir, env })).code).toBe(0);
    const writer = new SQLite(file);
    const insert = writer.prepare("insert into events (at, type, username, detail) values (?, 'login.failure', ?, 'unknown user')");
    const at = Date.now() - 3_600_000;
    writer.transaction(() => {
      for (let i = 0; i < EVENTS; i += 1) insert.run(at + i, `user-${i}`);
    })();
    writer.close();

    server = ServerProcess.start({ cwd: dir, env });
    for (const deadline = Date.now() + 60_000; chainState(file).sealer.checkpoint_seq === 0; await sleep(20)) {
      if (Date.now() > deadline || !server.running) throw new Error(`no checkpoint came\n${server.stdout}${server.stderr}`);
    }
    expect(await server.stop('SIGKILL')).toEqual({ code: null, signal: 'SIGKILL' });

    const killed = chainState(file);
    expect(killed.sealer.seq).toBe(killed.sealer.checkpoint_seq);
    expect(killed.seqs).toEqual({ sealed: killed.sealer.seq, distinct_seqs: killed.sealer.seq, first: 1, last: killed.sealer.seq });
    expect(killed.sealer.seq).toBeLessThan(EVENTS);

    // The first start also created the signing key, itself an event (keys.created).
    const total = EVENTS + 1;
    server = ServerProcess.start({ cwd: dir, env });
    for (const deadline = Date.now() + 120_000; chainState(file).sealer.seq < total; await sleep(200)) {
      if (Date.now() > deadline || !server.running) throw new Error(`sealing did not finish\n${server.stdout}${server.stderr}`);
    }
    expect(await server.stop()).toEqual({ code: 0, signal: null });
    expect(chainState(file).seqs).toEqual({ sealed: total, distinct_seqs: total, first: 1, last: total });
    const verified = await runCli(['events', 'verify'], { cwd: dir, env, timeoutMs: 120_000 });
    expect(verified.stdout).toMatch(new RegExp(`^ok: ${total} sealed events and \\d+ checkpoints checked\\n$`));
  }, 240_000);
});
