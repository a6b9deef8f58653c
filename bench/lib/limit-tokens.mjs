// The refresh tokens bench/limit-server.mjs seeds its database with: derived from their index, so
// that the load generator knows them without asking. 43 characters of base64url, as ours.
import { createHash } from 'node:crypto';

export const LIMIT_TOKENS = 2000;

export function limitToken(index) {
  return createHash('sha256').update(`limit-token-${index}`).digest('base64url');
}

export function limitTokens(count = LIMIT_TOKENS) {
  return Array.from({ length: count }, (_, index) => limitToken(index));
}
