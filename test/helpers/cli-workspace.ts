import type { ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'vitest';
import { openInProcessApp, type InProcessApp } from './cli-app.js';
import { isRunning, runCli, type CliResult, type RunOptions } from './cli-run.js';

/**
 * One test's world: a fresh temporary directory (the working directory of every child, with the
 * SQLite DATA_DIR inside it), the children it started and the in-process apps it opened. All of it
 * is torn down after the test, whatever its outcome.
 */
export class Workspace {
  readonly root = mkdtempSync(join(tmpdir(), 'school-auth-cli-'));
  readonly dataDir = join(this.root, 'data');
  private readonly children = new Set<ChildProcess>();
  private readonly apps: InProcessApp[] = [];
  private shared: Promise<InProcessApp> | undefined;

  /** `school-auth ...args` with DATA_DIR set to this workspace. */
  run(args: readonly string[], options: RunOptions = {}): Promise<CliResult> {
    return runCli(
      args,
      { cwd: this.root, ...options, env: { DATA_DIR: this.dataDir, ...options.env } },
      (child) => this.track(child),
    );
  }

  track(child: ChildProcess): void {
    this.children.add(child);
    child.once('exit', () => this.children.delete(child));
  }

  /** The in-process app on this workspace's database, opened once. */
  app(): Promise<InProcessApp> {
    this.shared ??= this.openApp();
    return this.shared;
  }

  /** A new in-process app (fresh key cache), closed with the workspace. */
  async openApp(env: Record<string, string> = {}): Promise<InProcessApp> {
    const app = await openInProcessApp(this.dataDir, env);
    this.apps.push(app);
    return app;
  }

  async cleanup(): Promise<void> {
    for (const child of this.children) if (isRunning(child)) child.kill('SIGKILL');
    await Promise.all(this.apps.map((app) => app.close().catch(() => undefined)));
    rmSync(this.root, { recursive: true, force: true });
  }
}

/** `test` with a `ws` fixture: a fresh Workspace per test, cleaned up after it. */
export const cliTest = test.extend<{ ws: Workspace }>({
  // eslint-disable-next-line no-empty-pattern
  ws: async ({}, use) => {
    const ws = new Workspace();
    try {
      await use(ws);
    } finally {
      await ws.cleanup();
    }
  },
});

/** The JSON a `--json` command printed; fails with the raw output when it is not JSON. */
export function parseJson<T = unknown>(result: CliResult): T {
  try {
    return JSON.parse(result.stdout) as T;
  } catch {
    throw new Error(`expected JSON on stdout, got:\n${result.stdout}\nstderr:\n${result.stderr}`);
  }
}

/** Fails with the command's output when it did not exit 0. */
export function ok(result: CliResult): CliResult {
  if (result.code !== 0) throw new Error(`command failed with exit ${String(result.code)}\nstdout: ${result.stdout}\nstderr: ${result.stderr}`);
  return result;
}

/**
 * Each CLI run costs most of a second of CPU (module loading); with several tests running
 * concurrently on a busy two-core machine, a test of a few runs needs far more than 30 s.
 */
export const SLOW = { timeout: 120_000 };

export const ISO_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
