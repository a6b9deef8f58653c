import { createHash, generateKeyPairSync, randomBytes, sign, type KeyObject } from 'node:crypto';
import type {
  AuthenticationResponseJSON,
  PublicKeyCredentialCreationOptionsJSON,
  PublicKeyCredentialRequestOptionsJSON,
  RegistrationResponseJSON,
} from '@simplewebauthn/server';
import { encodeCbor, type CborValue } from './cbor.js';

/** authenticatorData flag bits (WebAuthn §6.1). */
const FLAG_UP = 0x01;
const FLAG_UV = 0x04;
const FLAG_BE = 0x08;
const FLAG_BS = 0x10;
const FLAG_AT = 0x40;

/** Ways a test may bend one ceremony; every one defaults to what an honest client does. */
export interface CeremonyKnobs {
  /** clientDataJSON.origin; default the authenticator's origin. */
  readonly origin?: string;
  /** The RP ID whose hash goes into authenticatorData; default the one the options name. */
  readonly rpId?: string;
  /** The challenge signed; default the one the options carry. */
  readonly challenge?: string;
  /** false clears the UV flag, as a key without PIN or biometrics would. */
  readonly userVerified?: boolean;
  /** authenticate only: the signCount to report, as is; the stored counter does not move. */
  readonly counter?: number;
  /**
   * authenticate only: the response.userHandle to report instead of the user id the credential
   * was registered with; null reports none, as for a credential that is not discoverable.
   */
  readonly userHandle?: string | null;
}

export interface SoftAuthenticatorOptions {
  /** The origin the "browser" reports, e.g. https://admin.school.test. */
  readonly origin: string;
  /** true: a synced passkey (BE and BS set, multiDevice); false: a device-bound key (singleDevice). */
  readonly synced?: boolean;
  /**
   * The credProps extension's answer at registration: true or false reports
   * `clientExtensionResults: { credProps: { rk } }` (a discoverable credential or not); absent
   * reports `{}`, as a browser that does not say.
   */
  readonly credProps?: boolean;
}

/**
 * A software WebAuthn authenticator and client in one, holding a single ES256 (P-256) credential.
 * It answers creation options with a `none` attestation and request options with an assertion
 * whose signCount grows by one per call, in the JSON shapes @simplewebauthn/browser sends.
 */
export class SoftAuthenticator {
  readonly origin: string;
  readonly synced: boolean;
  readonly credProps: boolean | undefined;
  readonly credentialId: Buffer = randomBytes(32);
  private readonly privateKey: KeyObject;
  private readonly publicKey: KeyObject;
  private registeredUser: string | undefined;
  private signCount = 0;

  constructor(options: SoftAuthenticatorOptions) {
    this.origin = options.origin;
    this.synced = options.synced ?? false;
    this.credProps = options.credProps;
    const pair = generateKeyPairSync('ec', { namedCurve: 'P-256' });
    this.privateKey = pair.privateKey;
    this.publicKey = pair.publicKey;
  }

  get id(): string {
    return this.credentialId.toString('base64url');
  }

  /** The user id the credential was registered with (base64url), which assertions report as userHandle. */
  get userHandle(): string | undefined {
    return this.registeredUser;
  }

  /** The signCount the last assertion reported (0 after registration). */
  get counter(): number {
    return this.signCount;
  }

  /** navigator.credentials.create(): one registration per authenticator, as its one credential. */
  register(options: PublicKeyCredentialCreationOptionsJSON, knobs: CeremonyKnobs = {}): RegistrationResponseJSON {
    if (this.registeredUser !== undefined) throw new Error('SoftAuthenticator: already registered; make a new one');
    this.registeredUser = options.user.id;
    const clientDataJSON = this.clientData('webauthn.create', knobs.challenge ?? options.challenge, knobs);
    const authData = Buffer.concat([
      this.authDataHead(knobs.rpId ?? options.rp.id ?? new URL(this.origin).hostname, FLAG_AT, knobs, 0),
      this.attestedCredentialData(),
    ]);
    const attestationObject = encodeCbor(new Map<CborValue, CborValue>([
      ['fmt', 'none'],
      ['attStmt', new Map()],
      ['authData', authData],
    ]));
    return {
      id: this.id,
      rawId: this.id,
      type: 'public-key',
      response: {
        clientDataJSON: clientDataJSON.toString('base64url'),
        attestationObject: attestationObject.toString('base64url'),
        authenticatorData: authData.toString('base64url'),
        publicKeyAlgorithm: -7,
        publicKey: this.publicKey.export({ format: 'der', type: 'spki' }).toString('base64url'),
        transports: this.transports(),
      },
      clientExtensionResults: this.credProps === undefined ? {} : { credProps: { rk: this.credProps } },
      authenticatorAttachment: this.synced ? 'platform' : 'cross-platform',
    };
  }

  /** navigator.credentials.get(): an assertion over authenticatorData || sha256(clientDataJSON). */
  authenticate(options: PublicKeyCredentialRequestOptionsJSON, knobs: CeremonyKnobs = {}): AuthenticationResponseJSON {
    if (this.registeredUser === undefined) throw new Error('SoftAuthenticator: register before authenticating');
    const counter = knobs.counter ?? ++this.signCount;
    const clientDataJSON = this.clientData('webauthn.get', knobs.challenge ?? options.challenge, knobs);
    const authData = this.authDataHead(knobs.rpId ?? options.rpId ?? new URL(this.origin).hostname, 0, knobs, counter);
    // ECDSA over SHA-256; node:crypto writes the DER signature WebAuthn expects for ES256.
    const signature = sign('sha256', Buffer.concat([authData, sha256(clientDataJSON)]), this.privateKey);
    const userHandle = knobs.userHandle === undefined ? this.registeredUser : knobs.userHandle;
    return {
      id: this.id,
      rawId: this.id,
      type: 'public-key',
      response: {
        clientDataJSON: clientDataJSON.toString('base64url'),
        authenticatorData: authData.toString('base64url'),
        signature: signature.toString('base64url'),
        ...(userHandle === null ? {} : { userHandle }),
      },
      clientExtensionResults: {},
      authenticatorAttachment: this.synced ? 'platform' : 'cross-platform',
    };
  }

  private clientData(type: 'webauthn.create' | 'webauthn.get', challenge: string, knobs: CeremonyKnobs): Buffer {
    return Buffer.from(JSON.stringify({ type, challenge, origin: knobs.origin ?? this.origin, crossOrigin: false }), 'utf8');
  }

  /** rpIdHash (32) | flags (1) | signCount (4, big-endian). */
  private authDataHead(rpId: string, extraFlags: number, knobs: CeremonyKnobs, counter: number): Buffer {
    let flags = FLAG_UP | extraFlags;
    if (knobs.userVerified !== false) flags |= FLAG_UV;
    if (this.synced) flags |= FLAG_BE | FLAG_BS;
    const tail = Buffer.alloc(5);
    tail[0] = flags;
    tail.writeUInt32BE(counter, 1);
    return Buffer.concat([sha256(Buffer.from(rpId, 'utf8')), tail]);
  }

  /** aaguid (16 zero bytes: `none` attestation) | credentialId length (2) | credentialId | COSE key. */
  private attestedCredentialData(): Buffer {
    const jwk = this.publicKey.export({ format: 'jwk' });
    const coseKey = encodeCbor(new Map<number, number | Uint8Array>([
      [1, 2], // kty: EC2
      [3, -7], // alg: ES256
      [-1, 1], // crv: P-256
      [-2, Buffer.from(jwk.x!, 'base64url')],
      [-3, Buffer.from(jwk.y!, 'base64url')],
    ]));
    const length = Buffer.alloc(2);
    length.writeUInt16BE(this.credentialId.length);
    return Buffer.concat([Buffer.alloc(16), length, this.credentialId, coseKey]);
  }

  private transports(): string[] {
    return this.synced ? ['hybrid', 'internal'] : ['usb'];
  }
}

function sha256(data: Buffer): Buffer {
  return createHash('sha256').update(data).digest();
}
