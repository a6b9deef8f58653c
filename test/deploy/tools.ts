import { spawn } from 'node:child_process';
import { accessSync, constants } from 'node:fs';
import { delimiter, join } from 'node:path';

/**
 * Whether a program is on the PATH. Checks of the deploy files need systemd-analyze, nginx and
 * caddy: on a developer's machine without them those checks are skipped, but in CI (CI=true),
 * which .ci/run equips with them, a missing one fails instead of passing silently.
 */
export function hasTool(name: string): boolean {
  const found = (process.env.PATH ?? '').split(delimiter).some((dir) => {
    try {
      accessSync(join(dir, name), constants.X_OK);
      return true;
    } catch {
      return false;
    }
  });
  if (!found && process.env.CI === 'true') throw new Error(`${name} is missing: .ci/run installs it for the deploy checks`);
  return found;
}

export interface ToolResult {
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

/** Runs a program to completion and collects its output (never through a shell). */
export function runTool(command: string, args: readonly string[], options: { env?: NodeJS.ProcessEnv; cwd?: string } = {}): Promise<ToolResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { cwd: options.cwd, env: options.env ?? process.env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}
