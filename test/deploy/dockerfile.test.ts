import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { validate } from 'dockerfile-utils';
import { afterEach, describe, expect, it } from 'vitest';
import { REPO_ROOT, childEnv } from '../helpers/cli-run.js';
import { freePort } from '../helpers/free-port.js';
import { ServerProcess } from '../helpers/server-process.js';
import { readRepoFile } from '../docs/markdown.js';
import { envOf, execForm, last, parseDockerfile } from './dockerfile.js';
import { runTool } from './tools.js';

// No container engine runs here, so the image is checked as far as it can be without one: the
// linter, the shape the deploy docs promise, and the final stage's command, environment and health
// check run as real processes on the built dist/.

const TEXT = readRepoFile('Dockerfile');
const stages = parseDockerfile(TEXT);
const build = stages[0]!;
const final = stages.at(-1)!;
const startScript = (JSON.parse(readRepoFile('package.json')) as { scripts: { start: string } }).scripts.start;

/** The image's /app is this checkout. */
const fromApp = (args: readonly string[]): string[] => args.map((arg) => arg.replace(/^\/app\//, `${REPO_ROOT}/`));

describe('the Dockerfile', () => {
  it('passes the linter', () => {
    const problems = validate(TEXT).map(({ range, message }) => `line ${range.start.line + 1}: ${typeof message === 'string' ? message : message.value}`);
    expect(problems).toEqual([]);
  });

  it('builds with dev dependencies and runs with production ones only', () => {
    expect(stages.length).toBeGreaterThanOrEqual(2);
    expect(build.name).toBeDefined();
    expect(build.instructions.some((step) => step.keyword === 'RUN' && /npm ci\b/.test(step.args) && /npm prune --omit=dev/.test(step.args))).toBe(true);
    const copied = final.instructions.filter((step) => step.keyword === 'COPY').map((step) => step.args);
    expect(copied).toEqual(expect.arrayContaining([expect.stringMatching(new RegExp(`^--from=${build.name} /app/node_modules `)), expect.stringMatching(new RegExp(`^--from=${build.name} /app/dist `))]));
    expect(final.instructions.some((step) => step.keyword === 'RUN' && /\bnpm\b/.test(step.args))).toBe(false);
  });

  it('runs as a user other than root, with the database on the /data volume', () => {
    expect(last(final, 'USER')).toMatch(/^(?!root\b|0\b)\S+/);
    expect(execForm(last(final, 'VOLUME'))).toContain('/data');
    expect(envOf(final)).toMatchObject({ DATA_DIR: '/data', HOST: '0.0.0.0' });
  });

  it('hands SIGTERM straight to node: the entry point is the CLI file, whose first line execs node with its options', () => {
    expect(execForm(last(final, 'ENTRYPOINT'))).toEqual(['/app/dist/cli/main.js']);
    expect(execForm(last(final, 'CMD'))).toEqual(['serve']);
    expect(startScript).toBe('exec ./dist/cli/main.js serve');
  });

  it('sends the build stage exactly what it copies: .dockerignore lets in nothing else', () => {
    const allowed = readRepoFile('.dockerignore').split('\n').filter((line) => line.startsWith('!')).map((line) => line.slice(1).replace(/\/\*\*$/, ''));
    const sources = build.instructions.filter((step) => step.keyword === 'COPY').flatMap((step) => step.args.split(/\s+/).slice(0, -1));
    expect(readRepoFile('.dockerignore')).toMatch(/^\*\*$/m);
    expect([...allowed].sort()).toEqual([...sources].sort());
  });
});

describe("the image's command, as a process", () => {
  let server: ServerProcess | undefined;
  let dir: string | undefined;
  afterEach(() => {
    server?.kill();
    if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
  });
  const entrypoint = fromApp([...execForm(last(final, 'ENTRYPOINT'))!, ...execForm(last(final, 'CMD'))!]);
  const healthcheck = execForm(/\bCMD (\[.*\])$/.exec(last(final, 'HEALTHCHECK') ?? '')?.[1])!;

  it('stops at once without ISSUER, naming it, as docs/deploy.md says', async () => {
    dir = mkdtempSync(join(tmpdir(), 'school-auth-image-'));
    server = ServerProcess.launch(entrypoint[0]!, entrypoint.slice(1), { cwd: dir, env: { ...envOf(final), DATA_DIR: join(dir, 'data') } });
    expect(await server.waitExit()).toEqual({ code: 1, signal: null });
    expect(server.stderr).toContain('ISSUER: must be set when HOST (0.0.0.0) is not a loopback address');
    expect(readRepoFile('docs/deploy.md')).toContain('ISSUER: must be set when HOST (0.0.0.0) is not a loopback address');
  });

  it('serves, is healthy by its own health check, and exits 0 on SIGTERM', async () => {
    dir = mkdtempSync(join(tmpdir(), 'school-auth-image-'));
    const port = String(await freePort());
    const env = { ...envOf(final), DATA_DIR: join(dir, 'data'), PORT: port, ISSUER: 'https://auth.school.example' };
    server = ServerProcess.launch(entrypoint[0]!, entrypoint.slice(1), { cwd: dir, env });
    await server.waitHealthy(`http://127.0.0.1:${port}`);
    const check = () => runTool(process.execPath, healthcheck.slice(1), { env: childEnv({ ...envOf(final), PORT: port }) });
    expect(healthcheck[0]).toBe('node');
    expect((await check()).code).toBe(0);
    expect(await server.stop('SIGTERM')).toEqual({ code: 0, signal: null });
    expect((await check()).code).toBe(1);
  });
});
