import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { REPO_ROOT } from '../helpers/cli-run.js';
import { freePort } from '../helpers/free-port.js';
import { ServerProcess } from '../helpers/server-process.js';
import { readRepoFile } from '../docs/markdown.js';
import { hasTool, runTool } from './tools.js';

// The unit is checked by systemd's own tools, then its command runs as a real process with the
// unit's environment and the sample settings file read from the working directory, as it would be.

const UNIT = readRepoFile('deploy/school-auth.service');
const startScript = (JSON.parse(readRepoFile('package.json')) as { scripts: { start: string } }).scripts.start;

/** Every value of `key=` in the unit, in order. */
function values(key: string): string[] {
  return [...UNIT.matchAll(new RegExp(`^${key}=(.*)$`, 'gm'))].map((match) => match[1]!);
}

let dir: string | undefined;
let server: ServerProcess | undefined;
afterEach(() => {
  server?.kill();
  if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
  dir = undefined;
});

describe.skipIf(!hasTool('systemd-analyze'))('deploy/school-auth.service, by systemd', () => {
  it('passes systemd-analyze verify without a warning', async () => {
    dir = mkdtempSync(join(tmpdir(), 'school-auth-unit-'));
    // This checkout's build stands in for /opt/school-auth, whose program verify checks is executable.
    writeFileSync(join(dir, 'school-auth.service'), UNIT.replace(/^ExecStart=\/opt\/school-auth\//m, `ExecStart=${REPO_ROOT}/`));
    const result = await runTool('systemd-analyze', ['verify', join(dir, 'school-auth.service')]);
    expect({ code: result.code, stderr: result.stderr }).toEqual({ code: 0, stderr: '' });
  });

  it('is rated at most 2.0 by systemd-analyze security', async () => {
    const result = await runTool('systemd-analyze', ['security', '--offline=yes', '--threshold=20', '--no-pager', join(REPO_ROOT, 'deploy', 'school-auth.service')]);
    expect(result.stdout).toMatch(/Overall exposure level for school-auth\.service: [0-2]\.\d/);
    expect(result.code).toBe(0);
  });
});

describe('deploy/school-auth.service, as written', () => {
  it('runs as a dedicated user with its state under /var/lib/school-auth', () => {
    expect(values('User')).toEqual(['school-auth']);
    expect(values('StateDirectory')).toEqual(['school-auth']);
    expect(values('Environment')).toContain('DATA_DIR=/var/lib/school-auth');
  });

  it('is hardened, without MemoryDenyWriteExecute, which would stop V8', () => {
    for (const setting of ['NoNewPrivileges=yes', 'ProtectSystem=strict', 'ProtectHome=yes', 'PrivateTmp=yes', 'PrivateDevices=yes', 'CapabilityBoundingSet=', 'SystemCallFilter=@system-service']) {
      expect(UNIT.split('\n')).toContain(setting);
    }
    expect(values('RestrictAddressFamilies')).toEqual(['AF_INET AF_INET6 AF_UNIX']);
    expect(values('MemoryDenyWriteExecute')).toEqual([]);
  });

  it('runs the CLI file itself, so that its first line gives node its options, as npm start does', () => {
    expect(values('ExecStart')).toEqual(['/opt/school-auth/dist/cli/main.js serve']);
    expect(startScript).toBe('exec ./dist/cli/main.js serve');
  });

  it('serves with the sample settings read from its working directory, and exits 0 on SIGTERM', async () => {
    dir = mkdtempSync(join(tmpdir(), 'school-auth-unit-'));
    const keyFile = join(dir, 'key-encryption-key');
    writeFileSync(keyFile, `${Buffer.alloc(32, 7).toString('base64')}\n`);
    chmodSync(keyFile, 0o600);
    const port = await freePort();
    const settings = readRepoFile('deploy/school-auth.env')
      .replace(/^DATA_DIR=.*$/m, `DATA_DIR=${join(dir, 'data')}`)
      .replace(/^KEY_ENCRYPTION_KEY_FILE=.*$/m, `KEY_ENCRYPTION_KEY_FILE=${keyFile}`)
      .replace(/^PORT=.*$/m, `PORT=${port}`);
    writeFileSync(join(dir, '.env'), settings);
    const unitEnv = Object.fromEntries(values('Environment').map((pair) => pair.split('=') as [string, string]));
    const [file, ...args] = values('ExecStart')[0]!.replace('/opt/school-auth/', `${REPO_ROOT}/`).split(' ');
    server = ServerProcess.launch(file!, args, { cwd: dir, env: { ...unitEnv, DATA_DIR: join(dir, 'data') } });
    await server.waitHealthy(`http://127.0.0.1:${port}`);
    const jwks = (await (await fetch(`http://127.0.0.1:${port}/.well-known/jwks.json`)).json()) as { keys: unknown[] };
    expect(jwks.keys).toHaveLength(1);
    expect(await server.stop('SIGTERM')).toEqual({ code: 0, signal: null });
  });
});
