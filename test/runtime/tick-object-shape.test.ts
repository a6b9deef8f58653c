import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { REPO_ROOT } from '../helpers/cli-run.js';

const run = promisify(execFile);
const dist = (path: string) => JSON.stringify(pathToFileURL(join(REPO_ROOT, 'dist', path)).href);
const MODULE = dist('runtime/tick-object-shape.js');

/**
 * A real Node process: ticks scheduled and run, then full collections while none is pending, as
 * a server's start-up can do. %DebugPrint shows V8's feedback for each property `nextTick`'s object
 * literal defines; %HaveSameMap compares hidden classes. The summary goes to standard error: V8
 * prints to standard output, and a standard output that Node has opened is a non-blocking pipe
 * that V8's printing may lose part of.
 */
const SCRIPT = `
import { executionAsyncResource } from 'node:async_hooks';
import { holdTickObjectShape, heldTickObject } from ${MODULE};
const tick = () => new Promise((resolve) => process.nextTick(() => resolve(executionAsyncResource())));
if (process.argv.includes('hold')) holdTickObjectShape();
await tick();
for (let round = 0; round < 3; round++) {
  for (let i = 0; i < 1000; i++) process.nextTick(() => {});
  await tick();
  await new Promise((resolve) => setImmediate(resolve));
  gc();
}
const fresh = await tick();
const held = heldTickObject();
console.error('held ' + (held !== undefined) + ' same-map ' + (held !== undefined && %HaveSameMap(held, fresh)));
%DebugPrint(process.nextTick);
`;

/** Runs `script` as a module file of its own (threads a server starts inherit the process's flags). */
async function runScript(script: string, nodeFlags: readonly string[], args: readonly string[], env?: NodeJS.ProcessEnv): Promise<{ stdout: string; stderr: string }> {
  const dir = await mkdtemp(join(tmpdir(), 'school-auth-tick-'));
  try {
    await writeFile(join(dir, 'script.mjs'), script);
    return await run(process.execPath, [...nodeFlags, join(dir, 'script.mjs'), ...args], { cwd: REPO_ROOT, env: { ...env, DATA_DIR: dir }, maxBuffer: 16 * 1024 * 1024 });
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

async function literalFeedback(mode: 'hold' | 'control'): Promise<{ states: string[]; summary: string }> {
  const { stdout, stderr } = await runScript(SCRIPT, ['--allow-natives-syntax', '--expose-gc'], [mode], process.env);
  const states = [...stdout.matchAll(/DefineKeyedOwnPropertyInLiteral (\w+)/g)].map((match) => match[1]!);
  const summary = /held \w+ same-map \w+/.exec(stderr)?.[0] ?? '';
  return { states, summary };
}

describe("Node's tick objects keep their shape", () => {
  it('without a held tick, a collection between ticks turns the literal megamorphic (what the hold prevents)', async () => {
    const { states, summary } = await literalFeedback('control');
    expect(summary).toBe('held false same-map false');
    expect(states).toContain('MEGAMORPHIC');
  });

  it('with a held tick, every property of the literal keeps the one map it saw, through collections', async () => {
    const { states, summary } = await literalFeedback('hold');
    expect(summary).toBe('held true same-map true');
    expect(states.length).toBeGreaterThanOrEqual(2);
    expect(states.every((state) => state === 'MONOMORPHIC')).toBe(true);
  });

  it('the server holds one as it starts', async () => {
    const script = `
      import { serve } from ${dist('server.js')};
      import { loadConfig } from ${dist('config/config.js')};
      import { heldTickObject } from ${MODULE};
      const app = await serve(loadConfig());
      console.log('held ' + (heldTickObject() !== undefined));
      await app.close();
      process.exit(0);
    `;
    const env = { PATH: process.env.PATH, PORT: '0', LOG_LEVEL: 'silent', ISSUER: 'https://auth.school.example' };
    expect((await runScript(script, [], [], env)).stdout.trim()).toBe('held true');
  });
});
