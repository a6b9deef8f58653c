import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { listAdmins } from '../../src/db/queries/admins.js';
import { CLI_MAIN, childEnv } from '../helpers/cli-run.js';
import { Workspace } from '../helpers/cli-workspace.js';

/** util-linux `script` gives the command a pseudo-terminal: the only way to reach the no-echo prompt. */
const scriptProbe = spawnSync('script', ['--version'], { encoding: 'utf8' });
const hasScript = scriptProbe.status === 0 && /util-linux/.test(scriptProbe.stdout);
if (!hasScript) console.warn('\n*** util-linux `script` is not available: the pseudo-terminal prompt tests are SKIPPED ***\n');

function shellQuote(text: string): string {
  return `'${text.replaceAll("'", `'\\''`)}'`;
}

/** `school-auth ...args` on a pseudo-terminal; `type` answers prompts as a person would. */
class Terminal {
  output = '';
  readonly exited: Promise<number | null>;
  private readonly child: ChildProcess;

  constructor(ws: Workspace, args: readonly string[]) {
    const command = [process.execPath, CLI_MAIN, ...args].map(shellQuote).join(' ');
    this.child = spawn('script', ['-qec', command, '/dev/null'], { cwd: ws.root, env: childEnv({ DATA_DIR: ws.dataDir, TERM: 'dumb' }) });
    ws.track(this.child);
    this.child.stdout?.setEncoding('utf8').on('data', (chunk: string) => (this.output += chunk));
    this.child.stderr?.setEncoding('utf8').on('data', (chunk: string) => (this.output += chunk));
    this.exited = new Promise((resolve) => this.child.on('close', (code) => resolve(code)));
  }

  /** Waits for `text` to appear in the output after `from`; returns where it ends. */
  async waitFor(text: string, from = 0, timeoutMs = 60_000): Promise<number> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const at = this.output.indexOf(text, from);
      if (at >= 0) return at + text.length;
      if (Date.now() > deadline || this.child.exitCode !== null) throw new Error(`no ${JSON.stringify(text)} in the output: ${JSON.stringify(this.output)}`);
      await sleep(20);
    }
  }

  /** Types a line and presses Enter (a terminal sends CR). */
  type(line: string): void {
    this.child.stdin?.write(`${line}\r`);
  }

  async finish(): Promise<number | null> {
    const code = await this.exited;
    this.child.stdin?.end();
    return code;
  }
}

describe.skipIf(!hasScript)('admin add on a terminal (pseudo-terminal via script)', { timeout: 120_000 }, () => {
  let ws: Workspace;
  beforeEach(() => {
    ws = new Workspace();
  });
  afterEach(() => ws.cleanup());

  it('asks for the password twice without echoing it, then creates the admin with exactly that password', async () => {
    const app = await ws.app();
    await app.seedSchool('lincoln-high');
    const password = 'typed on a keyboard 7!';

    const terminal = new Terminal(ws, ['admin', 'add', '--school', 'lincoln-high', '--username', 'alice']);
    const afterFirst = await terminal.waitFor('New password:');
    terminal.type(password);
    await terminal.waitFor('Repeat password:', afterFirst);
    terminal.type(password);
    const code = await terminal.finish();

    expect(code, terminal.output).toBe(0);
    expect(terminal.output).toContain('admin "alice" created in school "lincoln-high"');
    expect(terminal.output).not.toContain(password);
    expect(terminal.output).not.toContain('typed on');
    expect(terminal.output).not.toMatch(/\*{4,}/);
    expect((await listAdmins(app.services.db)).map((admin) => admin.username)).toEqual(['alice']);
    expect((await app.login({ school_id: 'lincoln-high', username: 'alice', password })).statusCode).toBe(200);
  });

  it('refuses two different answers and creates nothing', async () => {
    const app = await ws.app();
    await app.seedSchool('lincoln-high');
    const terminal = new Terminal(ws, ['admin', 'add', '--school', 'lincoln-high', '--username', 'alice']);
    const afterFirst = await terminal.waitFor('New password:');
    terminal.type('first answer 123456');
    await terminal.waitFor('Repeat password:', afterFirst);
    terminal.type('second answer 654321');
    const code = await terminal.finish();

    expect(code).toBe(1);
    expect(terminal.output).toContain('school-auth: the two passwords do not match');
    expect(terminal.output).not.toMatch(/first answer|second answer/);
    expect(await listAdmins(app.services.db)).toEqual([]);
  });
});
