import { cpSync, rmSync } from 'node:fs';
import { basename, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { REPO_ROOT, childEnv } from '../helpers/cli-run.js';
import { readRepoFile } from '../docs/markdown.js';
import { envOf, execForm, last, parseDockerfile, type Stage } from './dockerfile.js';
import { VERSION, mustRun, runLines, scratch, terminal } from './install.js';

// No container engine runs here (dockerfile.test.ts), so the image is built by hand: the build
// stage's COPY and npm steps in one directory standing for its /app, the final stage's COPY
// --from into another, then the image's command and its `school-auth` link answer --version.

const stages = parseDockerfile(readRepoFile('Dockerfile'));
const build = stages[0]!;
const final = stages.at(-1)!;
const buildApp = last(build, 'WORKDIR')!;
const finalApp = last(final, 'WORKDIR')!;

/** Docker's COPY: sources into a directory when the destination ends with `/`, else to that path. */
function copy(stage: Stage, source: (path: string) => string, into: string): void {
  for (const step of stage.instructions.filter((instruction) => instruction.keyword === 'COPY')) {
    const words = step.args.split(/\s+/).filter((word) => !word.startsWith('--'));
    const dest = words.pop()!;
    for (const path of words) cpSync(source(path), dest.endsWith('/') ? join(into, dest, basename(path)) : join(into, dest), { recursive: true });
  }
}

let root = '';
let env: Record<string, string | undefined> = {};
beforeAll(async () => {
  root = scratch();
  env = await terminal(root);
});
afterAll(() => rmSync(root, { recursive: true, force: true }));

describe('the Dockerfile, built step by step without a container engine', () => {
  it('ends with an image whose command and school-auth link answer --version', async () => {
    const [buildDir, finalDir] = [join(root, 'build-app'), join(root, 'final-app')];
    copy(build, (path) => join(REPO_ROOT, path), buildDir);
    const runs = build.instructions.filter((instruction) => instruction.keyword === 'RUN').map((instruction) => instruction.args);
    // Skipped: Debian's packages that compile native modules when no prebuilt binary fits (root only).
    expect(runs.filter((run) => !/\bnpm\b/.test(run)).every((run) => run.startsWith('apt-get '))).toBe(true);
    const npmRuns = runs.filter((run) => /\bnpm\b/.test(run));
    expect(npmRuns.join('\n')).toMatch(/npm ci\b.*npm prune --omit=dev/);
    await runLines(npmRuns, { env, cwd: buildDir });

    copy(final, (path) => path.replace(`${buildApp}/`, `${buildDir}/`), finalDir);
    const inImage = (path: string) => path.replace(`${finalApp}/`, `${finalDir}/`);
    const entrypoint = execForm(last(final, 'ENTRYPOINT'))!.map(inImage);
    const imageEnv = childEnv({ ...env, ...envOf(final), DATA_DIR: join(root, 'data') });
    // The program itself: its first line runs node with the service's options.
    expect(entrypoint).toEqual([join(finalDir, 'dist', 'cli', 'main.js')]);
    expect((await mustRun(entrypoint[0]!, ['--version'], { env: imageEnv })).stdout.trim()).toBe(VERSION);
    const [, linked] = /\bln -s (\S+) \S+\/school-auth\b/.exec(final.instructions.map((instruction) => instruction.args).join('\n')) ?? [];
    expect((await mustRun(inImage(linked!), ['--version'], { env: imageEnv })).stdout.trim()).toBe(VERSION);
  }, 900_000);
});
