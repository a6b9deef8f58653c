import { readdirSync, readFileSync } from 'node:fs';
import type { Worker } from 'node:worker_threads';
import { afterEach, describe, expect, it } from 'vitest';
import { HashThreads } from '../../../src/auth/passwords/hash-threads.js';
import { PasswordHasher } from '../../../src/auth/passwords/passwords.js';

// Small parameters: these tests are about the threads, not about argon2id's cost.
const PARAMS = { memoryCost: 1024, timeCost: 1, parallelism: 1 };
const OPTIONS = { algorithm: 2, ...PARAMS };

/** Nice values of this process's threads (Linux: a per-thread attribute). */
function threadNiceValues(): number[] {
  return readdirSync('/proc/self/task').map((tid) => {
    const stat = readFileSync(`/proc/self/task/${tid}/stat`, 'utf8');
    // Fields after the command name, which is in parentheses and may hold spaces; nice is field 19.
    return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[16]);
  });
}

let opened: { close(): Promise<void> }[] = [];
afterEach(async () => {
  await Promise.all(opened.map((o) => o.close()));
  opened = [];
});

describe('HashThreads', () => {
  it('hashes and verifies argon2id on a thread of its own', async () => {
    const threads = new HashThreads();
    opened.push(threads);
    const phc = await threads.hash('correct horse battery staple', OPTIONS);
    expect(phc).toMatch(/^\$argon2id\$v=19\$m=1024,t=1,p=1\$/);
    expect(await threads.verify(phc, 'correct horse battery staple')).toBe(true);
    expect(await threads.verify(phc, 'wrong horse battery staple')).toBe(false);
    await expect(threads.verify('not a hash', 'x')).rejects.toThrow();
    expect(threads.size).toBe(1);
  });

  it('runs hashing threads below the priority of the event loop', { skip: process.platform !== 'linux' }, async () => {
    const before = threadNiceValues().filter((nice) => nice === 10).length;
    const threads = new HashThreads();
    opened.push(threads);
    await threads.hash('x'.repeat(12), OPTIONS);
    expect(threadNiceValues().filter((nice) => nice === 10).length).toBe(before + 1);
    // The calling thread (the event loop) keeps its priority.
    expect(Number(readFileSync('/proc/thread-self/stat', 'utf8').split(') ')[1]!.split(' ')[16])).toBe(0);
  });

  it('stops its threads on close; a job caught by it fails instead of hanging', async () => {
    const threads = new HashThreads();
    const pending = threads.hash('y'.repeat(12), { ...OPTIONS, memoryCost: 65536, timeCost: 3 });
    await threads.close();
    await expect(pending).rejects.toThrow();
    expect(threads.size).toBe(0);
  });
});

describe('PasswordHasher', () => {
  it('never starts more threads than its concurrency, however many verifications wait', async () => {
    const hasher = await PasswordHasher.create(PARAMS, 2, 100);
    opened.push(hasher);
    const phc = await hasher.hash('correct horse battery staple');
    const results = await Promise.all(Array.from({ length: 12 }, (_, i) => hasher.verify(phc, i % 2 === 0 ? 'correct horse battery staple' : 'wrong')));
    expect(results).toEqual(Array.from({ length: 12 }, (_, i) => i % 2 === 0));
    expect(hasher.threadCount).toBeLessThanOrEqual(2);
    expect(await hasher.verify('$argon2id$v=19$m=1024,t=1,p=1$broken', 'x')).toBe(false);
  });
});

describe('HashThreads when a thread dies while idle', () => {
  it('forgets it and starts a new one for the next job, without an unhandled error', async () => {
    const threads = new HashThreads();
    opened.push(threads);
    await threads.hash('z'.repeat(12), OPTIONS);
    expect(threads.size).toBe(1);
    // Reach the idle worker the way a crash would end it.
    const idle = (threads as unknown as { idle: Worker[] }).idle[0]!;
    await idle.terminate();
    expect(threads.size).toBe(0);
    const phc = await threads.hash('z'.repeat(12), OPTIONS);
    expect(await threads.verify(phc, 'z'.repeat(12))).toBe(true);
    expect(threads.size).toBe(1);
  });
});
