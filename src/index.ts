/** What other packages may import: building the service, and verifying its tokens elsewhere. */
export { buildApp } from './app.js';
export type { AppContext } from './context.js';
export { loadConfig, type Config } from './config.js';
export { openServices } from './services.js';
export {
  createAccessTokenVerifier,
  requireAccessToken,
  InsufficientAuthenticationError,
  RevocationsUnavailableError,
  SessionRevokedError,
  type AccessTokenVerifier,
  type AssuranceLevel,
  type VerifiedAccessToken,
  type VerifierOptions,
} from './verifier.js';
