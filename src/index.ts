/** What other packages may import: building the service, and verifying its tokens elsewhere. */
export { buildApp, type AppDeps } from './app.js';
export { loadConfig, type Config } from './config.js';
export { openServices } from './services.js';
export { createAccessTokenVerifier, requireAccessToken, type AccessTokenVerifier, type VerifiedAccessToken, type VerifierOptions } from './verifier.js';
