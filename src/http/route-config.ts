/**
 * Facts about a route that the plugins act on. Each is declared on the route it describes, in the
 * `config` of its definition, never in a table keyed by URL elsewhere: a route renamed, added or
 * removed carries its facts with it. Fastify hands `config` to the onRoute hooks (`route.config`,
 * read once per route at registration) and to each request (`request.routeOptions.config`).
 * An answer that matched no route (404, 405) has no config: every fact below is then absent.
 */

/** The metric that counts a route's attempts by outcome (see src/http/plugins/metrics.ts). */
export type AttemptCounter = 'logins' | 'refreshes' | 'mfaVerifications' | 'ssoExchanges' | 'passkeyLogins';

/** A step of the browser's single sign-on round trip, counted by where it sends the browser. */
type SsoBrowserStep = 'start' | 'callback';

declare module 'fastify' {
  interface FastifyContextConfig {
    /**
     * The body is one of the original contract's, whose answers are fixed: text no database holds
     * (NUL, a lone surrogate) passes as it is instead of being a 422 (src/http/body/validator.ts).
     */
    contractBody?: true;
    /** Its 403 asks for the second factor; any other route's 403 is a locked second factor. */
    signIn?: true;
    /** Each answer counts one attempt on this counter, by the outcome its status says. */
    attemptCounter?: AttemptCounter;
    /** Each answer counts on the single sign-on callback counter, by where it sends the browser. */
    ssoBrowserStep?: SsoBrowserStep;
  }
}
