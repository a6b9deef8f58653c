/** What other packages may import: building the service, and verifying its tokens elsewhere. */
export { buildApp } from './app.js';
export type { AppContext } from './auth/context.js';
export { loadConfig, type Config } from './config/config.js';
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
} from './verifier/index.js';
