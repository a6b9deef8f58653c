import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { childEnv } from '../helpers/cli-run.js';
import { codeSpans, readRepoFile } from '../docs/markdown.js';
import { freePort } from '../helpers/free-port.js';
import { ServerProcess } from '../helpers/server-process.js';
import { VERSION, copyCheckout, mustRun, onPath, runLines, scratch, shellLines, terminal } from './install.js';

// Every install of a checkout the docs give, on one copy of this checkout, with the commands
// read from the docs: the README's, then docs/deploy.md's systemd install and package tarball,
// which start from a checkout where `npm ci` ran, this one. The image: install-image.test.ts.

const README = readRepoFile('README.md');
const DEPLOY = readRepoFile('docs/deploy.md');
const [firstLine = ''] = README.split('\n').filter((line) => /^ {4}npm ci\b/.test(line));
const readme = firstLine.replace(/\s#.*$/, '').trim().split(' && ');
const npx = codeSpans(README).find((span) => span.startsWith('npx --no-install school-auth '))!.replace(/ \.\.\.$/, '');
const systemd = shellLines(DEPLOY, 'systemd');
const target = /^git clone \S+ (\S+)/.exec(systemd.find((line) => line.startsWith('git clone ')) ?? '')?.[1] ?? '';
const execStart = /^ExecStart=(.*)$/m.exec(readRepoFile('deploy/school-auth.service'))?.[1] ?? '';

let root = '';
let checkout = '';
let env: Record<string, string | undefined> = {};
let server: ServerProcess | undefined;
beforeAll(async () => {
  root = scratch();
  checkout = join(root, 'school-auth');
  await copyCheckout(checkout);
  env = await terminal(root);
});
afterAll(() => {
  // npm start's whole process group: the server too, should npm have died before it.
  try {
    if (server?.child.pid !== undefined) process.kill(-server.child.pid, 'SIGKILL');
  } catch {
    // already gone
  }
  rmSync(root, { recursive: true, force: true });
});

describe('installs of a checkout, as the docs say', () => {
  it('README: npm ci && npm start serves, and npx --no-install school-auth answers --version', async () => {
    expect(readme.at(-1)).toBe('npm start');
    await runLines(readme.slice(0, -1), { env, cwd: checkout });
    const port = await freePort();
    server = ServerProcess.launch('bash', ['-c', readme.at(-1)!], { cwd: checkout, env: { ...env, PORT: String(port) }, detached: true });
    await server.waitHealthy(`http://127.0.0.1:${port}`, 60_000);
    expect(await server.stop('SIGTERM')).toEqual({ code: 0, signal: null });
    expect((await runLines([`${npx} --version`], { env, cwd: checkout })).stdout.trim()).toBe(VERSION);
  }, 900_000);

  it('docs/deploy.md, systemd: school-auth on the PATH and the program of the unit answer --version', async () => {
    expect(target).toMatch(/^\/opt\//);
    expect(execStart).toContain(`${target}/`);
    const steps = systemd.filter((line) => /\bnpm\b/.test(line)).map((line) => line.replaceAll(target, checkout));
    // Its npm ci is the README's, on the same files: that tree is reused.
    expect(steps.slice(0, readme.length - 1)).toEqual(readme.slice(0, -1));
    expect(steps.slice(readme.length - 1).join('\n')).toMatch(/^npm prune --omit=dev\n[\s\S]*npm install -g /);
    await runLines([`cd ${checkout}`, ...steps.slice(readme.length - 1)], { env, cwd: root });
    expect(await onPath(env, root)).toEqual({ path: join(root, 'global', 'bin', 'school-auth'), version: VERSION });
    const [program, ...args] = execStart.replaceAll(`${target}/`, `${checkout}/`).split(' ');
    expect(args).toEqual(['serve']);
    const unit = await mustRun(program!, ['--version'], { env: childEnv(env) });
    expect(unit.stdout.trim()).toBe(VERSION);
  }, 600_000);

  it('docs/deploy.md, a package tarball of that checkout: school-auth on the PATH answers --version', async () => {
    const lines = shellLines(DEPLOY, 'A package tarball');
    expect(lines.join('\n')).toMatch(/^npm pack\b[\s\S]*^npm install -g /m);
    const elsewhere = await terminal(root, 'tarball');
    await runLines(lines, { env: elsewhere, cwd: checkout });
    expect(await onPath(elsewhere, root)).toEqual({ path: join(root, 'tarball', 'bin', 'school-auth'), version: VERSION });
  }, 600_000);
});
