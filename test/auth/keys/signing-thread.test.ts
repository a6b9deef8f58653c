import { execFile } from 'node:child_process';
import { generateKeyPairSync, type KeyObject } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { Worker } from 'node:worker_threads';
import { compactVerify, decodeJwt, jwtVerify } from 'jose';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { createJwsSigner, signJwt } from '../../../src/auth/keys/jws.js';
import { SigningThread } from '../../../src/auth/keys/signing-thread.js';
import { BATCH_AT } from '../../../src/runtime/turn-batch.js';

const es256 = () => generateKeyPairSync('ec', { namedCurve: 'P-256' });
const ed25519 = () => generateKeyPairSync('ed25519');
const encoded = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');
const input = (n: number, alg = 'ES256') => `${encoded({ alg })}.${encoded({ n })}`;

let opened: SigningThread[] = [];
afterEach(async () => {
  vi.restoreAllMocks();
  await Promise.all(opened.map((thread) => thread.close()));
  opened = [];
});

function newThread(): SigningThread {
  const thread = new SigningThread();
  opened.push(thread);
  return thread;
}

async function payloadOf(jws: string, publicKey: KeyObject): Promise<unknown> {
  const { payload } = await compactVerify(jws, publicKey);
  return JSON.parse(Buffer.from(payload).toString('utf8'));
}

describe('SigningThread', () => {
  it('sends the signatures of one turn in messages of BATCH_AT, the rest at the end of the turn, each answer to its own caller', async () => {
    const thread = newThread();
    const posted = vi.spyOn(Worker.prototype, 'postMessage');
    const ec = es256();
    const ed = ed25519();
    const count = 2 * BATCH_AT + 3;
    const asked = Array.from({ length: count }, (_, n) => (n % 2 === 0 ? thread.sign(ec.privateKey, 'sha256', input(n)) : thread.sign(ed.privateKey, null, input(n, 'EdDSA'))));
    // Full messages leave before the turn ends, so the thread signs while the turn goes on.
    expect(posted).toHaveBeenCalledTimes(2);
    const tokens = await Promise.all(asked);
    expect(posted.mock.calls.map(([batch]) => (batch as { jobs: unknown[] }).jobs.length)).toEqual([BATCH_AT, BATCH_AT, 3]);
    for (const [n, token] of tokens.entries()) {
      expect(token.startsWith(`${input(n, n % 2 === 0 ? 'ES256' : 'EdDSA')}.`)).toBe(true);
      expect(await payloadOf(token, n % 2 === 0 ? ec.publicKey : ed.publicKey)).toEqual({ n });
    }
    // The next turn is the next message; the keys were sent once and are not sent again.
    await thread.sign(ec.privateKey, 'sha256', input(99));
    expect(posted).toHaveBeenCalledTimes(4);
    expect((posted.mock.calls[3]![0] as { keys: unknown[] }).keys).toEqual([]);
  });

  it('fails a job that cannot be signed alone: the others of its batch are answered', async () => {
    const thread = newThread();
    const ec = es256();
    const good = thread.sign(ec.privateKey, 'sha256', input(1));
    const bad = thread.sign(ec.publicKey, 'sha256', input(2));
    await expect(bad).rejects.toThrow(/private/i);
    expect(await payloadOf(await good, ec.publicKey)).toEqual({ n: 1 });
  });

  it('refuses what a stopped thread had not answered, then signs on a new thread that is sent the keys again', async () => {
    const thread = newThread();
    const ec = es256();
    expect(await payloadOf(await thread.sign(ec.privateKey, 'sha256', input(1)), ec.publicKey)).toEqual({ n: 1 });
    const pending = thread.sign(ec.privateKey, 'sha256', input(2));
    const refused = expect(pending).rejects.toThrow(/closed/);
    await new Promise((resolve) => setImmediate(resolve));
    await thread.close();
    await refused;
    expect(await payloadOf(await thread.sign(ec.privateKey, 'sha256', input(3)), ec.publicKey)).toEqual({ n: 3 });
  });

  it('keeps signing with the right key after it has held more keys than it keeps', async () => {
    const thread = newThread();
    const pairs = Array.from({ length: 40 }, es256);
    for (const [n, pair] of pairs.entries()) {
      expect(await payloadOf(await thread.sign(pair.privateKey, 'sha256', input(n)), pair.publicKey)).toEqual({ n });
    }
    // A key sent before the thread forgot them all is sent again when it is used again.
    expect(await payloadOf(await thread.sign(pairs[0]!.privateKey, 'sha256', input(100)), pairs[0]!.publicKey)).toEqual({ n: 100 });
  });
});

describe('signJwt', () => {
  it('makes a JWS that jose verifies with the header it was given', async () => {
    const ec = es256();
    const token = await signJwt(createJwsSigner('kid-1', 'ES256', ec.privateKey, 'at+jwt'), { sub: 'admin', n: 7 });
    const { payload, protectedHeader } = await jwtVerify(token, ec.publicKey, { algorithms: ['ES256'], typ: 'at+jwt' });
    expect(protectedHeader).toEqual({ alg: 'ES256', typ: 'at+jwt', kid: 'kid-1' });
    expect(payload).toEqual({ sub: 'admin', n: 7 });
    expect(decodeJwt(token).n).toBe(7);
  });

  it('lets a command exit once it has signed: the idle thread holds nothing open', async () => {
    const jws = new URL('../../../dist/auth/keys/jws.js', import.meta.url).href;
    const script = `import { generateKeyPairSync } from 'node:crypto';
      const { createJwsSigner, signJwt } = await import(${JSON.stringify(jws)});
      const { privateKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
      console.log(await signJwt(createJwsSigner('k', 'ES256', privateKey, 'JWT'), { done: true }));`;
    const dir = await mkdtemp(join(tmpdir(), 'school-auth-sign-'));
    try {
      await writeFile(join(dir, 'sign-once.mjs'), script);
      const { stdout } = await promisify(execFile)(process.execPath, [join(dir, 'sign-once.mjs')], { timeout: 15_000 });
      expect(decodeJwt(stdout.trim())).toEqual({ done: true });
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});

describe('signJwt', () => {
  const rs256 = () => generateKeyPairSync('rsa', { modulusLength: 2048 });
  it.each([
    ['ES256', es256],
    ['RS256', rs256],
    ['EdDSA', ed25519],
  ] as const)('signs %s on the signing thread, as jose verifies it', async (alg, pair) => {
    const keys = pair();
    const signer = createJwsSigner('kid-h', alg, keys.privateKey, 'at+jwt');
    const claims = { sub: 'admin', n: 9 };
    const token = await signJwt(signer, claims);
    const { payload, protectedHeader } = await jwtVerify(token, keys.publicKey, { algorithms: [alg], typ: 'at+jwt' });
    expect(protectedHeader).toEqual({ alg, typ: 'at+jwt', kid: 'kid-h' });
    expect(payload).toEqual(claims);
    // ECDSA's r||s form is 64 bytes for P-256, not DER's 70 or so.
    if (alg === 'ES256') expect(Buffer.from(token.split('.')[2]!, 'base64url')).toHaveLength(64);
  });
});
