import { Type } from '@sinclair/typebox';

/** Members the browser's JSON has that we pass on untouched (objects stay open for new fields). */
const open = (description: string) => Type.Object({}, { additionalProperties: true, description });

const descriptor = Type.Object(
  { id: Type.String({ description: 'Credential id, base64url' }), type: Type.Literal('public-key'), transports: Type.Optional(Type.Array(Type.String())) },
  { additionalProperties: true },
);

/** What `PublicKeyCredential.parseCreationOptionsFromJSON()` takes in the browser. */
export const PasskeyCreationOptions = Type.Object(
  {
    rp: open('`{name, id}`: WEBAUTHN_RP_NAME and WEBAUTHN_RP_ID'),
    user: open('`{id, name, displayName}`; `id` is opaque, never a name'),
    challenge: Type.String({ description: 'base64url; accepted once, for 300 s' }),
    pubKeyCredParams: Type.Array(open('`{type, alg}`: ES256, EdDSA, RS256')),
    timeout: Type.Integer(),
    excludeCredentials: Type.Array(descriptor, { description: "The admin's passkeys, so one key is not added twice" }),
    authenticatorSelection: open('`residentKey: "preferred"`, `userVerification: "required"`'),
    attestation: Type.String(),
  },
  { additionalProperties: true, description: 'WebAuthn creation options (JSON form); pass them to navigator.credentials.create()' },
);

/** What `PublicKeyCredential.parseRequestOptionsFromJSON()` takes in the browser. */
export const PasskeyRequestOptions = Type.Object(
  {
    challenge: Type.String({ description: 'base64url; accepted once, while the mfa_token lives' }),
    timeout: Type.Integer(),
    rpId: Type.String(),
    allowCredentials: Type.Array(descriptor, { description: "The admin's passkeys" }),
    userVerification: Type.String(),
  },
  { additionalProperties: true, description: 'WebAuthn request options (JSON form); pass them to navigator.credentials.get()' },
);

/** Request options for a passkey alone: what `PublicKeyCredential.parseRequestOptionsFromJSON()` takes. */
export const PasskeyLoginOptions = Type.Object(
  {
    challenge: Type.String({ description: 'base64url; accepted once, for 300 s' }),
    timeout: Type.Integer(),
    rpId: Type.String(),
    allowCredentials: Type.Array(descriptor, { maxItems: 0, description: 'Empty: the browser offers the discoverable passkeys it holds for rpId' }),
    userVerification: Type.String(),
  },
  { additionalProperties: true, description: 'WebAuthn request options (JSON form); pass them to navigator.credentials.get()' },
);

/** A PublicKeyCredential as the browser's `credential.toJSON()` gives it. */
export function credentialSchema(description: string) {
  return Type.Object(
    {
      id: Type.String(),
      rawId: Type.String(),
      type: Type.Literal('public-key'),
      response: open('clientDataJSON and the authenticator data or attestation, base64url'),
      clientExtensionResults: Type.Optional(open('Extension outputs')),
      authenticatorAttachment: Type.Optional(Type.String()),
    },
    { additionalProperties: true, description },
  );
}

export const PasskeyRegistrationBody = Type.Object({
  credential: credentialSchema('The result of navigator.credentials.create(), as credential.toJSON()'),
  name: Type.Optional(Type.String({ maxLength: 64, description: 'A label the admin recognises the key by (default "Passkey")' })),
});

export const PasskeySignInBody = Type.Object({
  mfa_token: Type.String({ maxLength: 128, description: 'The mfa_token of the 403 login answer', format: 'password' }),
});
