import {
  generateAuthenticationOptions,
  generateRegistrationOptions,
  verifyAuthenticationResponse,
  verifyRegistrationResponse,
  type WebAuthnCredential,
} from '@simplewebauthn/server';
import { describe, expect, it } from 'vitest';
import { encodeCbor } from './cbor.js';
import { SoftAuthenticator, type CeremonyKnobs } from './soft-authenticator.js';

// The test helper checked against the library directly, so the endpoint tests that use it
// fail only because of the endpoints.
const ORIGIN = 'https://admin.school.test';
const RP_ID = 'school.test';

async function registered(synced = false) {
  const authenticator = new SoftAuthenticator({ origin: ORIGIN, synced });
  const options = await generateRegistrationOptions({ rpName: 'school-auth', rpID: RP_ID, userName: 'alice', attestationType: 'none' });
  const response = authenticator.register(options);
  const verified = await verifyRegistrationResponse({ response, expectedChallenge: options.challenge, expectedOrigin: ORIGIN, expectedRPID: RP_ID });
  return { authenticator, options, response, verified };
}

async function assert(authenticator: SoftAuthenticator, credential: WebAuthnCredential, knobs: CeremonyKnobs = {}) {
  const options = await generateAuthenticationOptions({ rpID: RP_ID, allowCredentials: [{ id: authenticator.id }], userVerification: 'required' });
  const response = authenticator.authenticate(options, knobs);
  return verifyAuthenticationResponse({ response, expectedChallenge: options.challenge, expectedOrigin: ORIGIN, expectedRPID: RP_ID, credential });
}

describe('encodeCbor', () => {
  it('writes the shortest heads and negative integers as RFC 8949 appendix A does', () => {
    const cases: Array<[Parameters<typeof encodeCbor>[0], string]> = [
      [0, '00'], [23, '17'], [24, '1818'], [1000, '1903e8'], [1_000_000, '1a000f4240'], [2 ** 32, '1b0000000100000000'],
      [-1, '20'], [-7, '26'], [-1000, '3903e7'], ['a', '6161'], [new Uint8Array([1, 2, 3, 4]), '4401020304'],
      [[1, [2, 3]], '8201820203'], [new Map([[1, 2], [3, 4]]), 'a201020304'],
    ];
    for (const [value, hex] of cases) expect(encodeCbor(value).toString('hex')).toBe(hex);
  });
});

describe('SoftAuthenticator against @simplewebauthn/server', () => {
  it('a device-bound registration verifies: none attestation, user verified, singleDevice, counter 0', async () => {
    const { authenticator, response, verified } = await registered();
    expect(verified.verified).toBe(true);
    expect(verified.registrationInfo).toMatchObject({ fmt: 'none', userVerified: true, credentialDeviceType: 'singleDevice', credentialBackedUp: false, origin: ORIGIN, rpID: RP_ID });
    expect(verified.registrationInfo?.credential.id).toBe(authenticator.id);
    expect(verified.registrationInfo?.credential.counter).toBe(0);
    expect(response.rawId).toBe(response.id);
    expect(response.id).toMatch(/^[A-Za-z0-9_-]{43}$/);
  });

  it('a synced passkey registers as multiDevice and backed up', async () => {
    const { verified } = await registered(true);
    expect(verified.registrationInfo).toMatchObject({ credentialDeviceType: 'multiDevice', credentialBackedUp: true });
  });

  it('assertions verify with the registered key, and the counter grows by one each time', async () => {
    const { authenticator, verified } = await registered();
    const credential = { ...verified.registrationInfo!.credential };
    for (const expected of [1, 2, 3]) {
      const result = await assert(authenticator, credential);
      expect(result.verified).toBe(true);
      expect(result.authenticationInfo).toMatchObject({ newCounter: expected, userVerified: true, credentialDeviceType: 'singleDevice' });
      credential.counter = result.authenticationInfo.newCounter;
    }
    expect(authenticator.counter).toBe(3);
  });

  it('each knob breaks the ceremony the way the library detects', async () => {
    const { authenticator, verified } = await registered();
    const credential = { ...verified.registrationInfo!.credential };
    await expect(assert(authenticator, credential, { origin: 'https://evil.test' })).rejects.toThrow(/origin/i);
    await expect(assert(authenticator, credential, { rpId: 'evil.test' })).rejects.toThrow(/RP ID/i);
    await expect(assert(authenticator, credential, { userVerified: false })).rejects.toThrow(/user could not be verified/i);
    await expect(assert(authenticator, credential, { challenge: Buffer.from('another').toString('base64url') })).rejects.toThrow(/challenge/i);
    credential.counter = 5;
    await expect(assert(authenticator, credential, { counter: 5 })).rejects.toThrow(/counter/i);
    await expect(assert(authenticator, credential, { counter: 4 })).rejects.toThrow(/counter/i);
    expect((await assert(authenticator, credential, { counter: 6 })).verified).toBe(true);
  });

  it('a registration with a knob turned fails to verify', async () => {
    const attempts: Array<[CeremonyKnobs, RegExp]> = [
      [{ origin: 'https://evil.test' }, /origin/i],
      [{ rpId: 'evil.test' }, /RP ID/i],
      [{ userVerified: false }, /user could not be verified/i],
    ];
    for (const [knobs, message] of attempts) {
      const options = await generateRegistrationOptions({ rpName: 'school-auth', rpID: RP_ID, userName: 'alice', attestationType: 'none' });
      const response = new SoftAuthenticator({ origin: ORIGIN }).register(options, knobs);
      await expect(verifyRegistrationResponse({ response, expectedChallenge: options.challenge, expectedOrigin: ORIGIN, expectedRPID: RP_ID })).rejects.toThrow(message);
    }
  });

  it('another authenticator\'s assertion does not verify against this credential', async () => {
    const { verified } = await registered();
    const { authenticator: other } = await registered();
    const result = await assert(other, { ...verified.registrationInfo!.credential, id: other.id });
    expect(result.verified).toBe(false);
  });
});
