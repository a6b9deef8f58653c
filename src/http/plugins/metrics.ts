import type { FastifyContextConfig, FastifyInstance, onResponseHookHandler } from 'fastify';
import { Counter, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import type { ResponseObserver } from '../request-lifecycle.js';
import type { AttemptCounter } from '../route-config.js';
import { registerStateGauges, type GaugeSources } from './state-gauges.js';

type Outcome = 'success' | 'refused' | 'throttled' | 'invalid_body' | 'error' | 'second_factor_required' | 'locked';

/** What a contract endpoint's status code says about the attempt. */
function outcomeOf(status: number, signIn: boolean): Outcome {
  if (status < 300) return 'success';
  // A sign-in's 403 asks for the second factor; a verification's 403 is a locked second factor.
  if (status === 403) return signIn ? 'second_factor_required' : 'locked';
  if (status === 401) return 'refused';
  if (status === 429) return 'throttled';
  if (status === 400 || status === 413 || status === 422) return 'invalid_body';
  return 'error';
}

/** A callback's outcome, read from where it sends the browser; a start counts only when the IdP is down. */
function ssoOutcomeOf(status: number, location: unknown, start: boolean): string | undefined {
  const target = typeof location === 'string' ? location : '';
  if (status === 302 && /[?&]error=temporarily_unavailable/.test(target)) return 'unavailable';
  if (start) return undefined;
  if (status === 302) return /[?&]error=/.test(target) ? 'refused' : 'success';
  if (status === 400) return 'invalid_state';
  if (status === 429) return 'throttled';
  return 'error';
}

interface Metrics {
  /** For answers that matched no route (the 404s and 405s): the request lifecycle sees those. */
  readonly observeUnmatched: ResponseObserver;
  /** Adds GET /metrics to `target`: the management listener's app, not the observed one. */
  addRoute(target: FastifyInstance): void;
}

const metricsByApp = new WeakMap<FastifyInstance, Metrics>();

/** The metrics observing `app`'s routes; undefined when metrics are off. */
export function metricsOf(app: FastifyInstance): Metrics | undefined {
  return metricsByApp.get(app);
}

/**
 * Prometheus metrics on their own registry, so each app (and each test) has its own. Every route
 * registered after this observes its own answers.
 */
export function registerMetrics(app: FastifyInstance, sources: GaugeSources): Metrics {
  const registry = new Registry();
  registry.setDefaultLabels({ service: 'school-auth' });
  collectDefaultMetrics({ register: registry });
  const logins = new Counter({ name: 'school_auth_logins_total', help: 'Login attempts by outcome', labelNames: ['outcome'], registers: [registry] });
  const refreshes = new Counter({ name: 'school_auth_refreshes_total', help: 'Refresh attempts by outcome', labelNames: ['outcome'], registers: [registry] });
  const secondFactors = new Counter({
    name: 'school_auth_mfa_verifications_total',
    help: 'Second-factor verifications by outcome',
    labelNames: ['outcome'],
    registers: [registry],
  });
  const ssoExchanges = new Counter({ name: 'school_auth_sso_exchanges_total', help: 'Single sign-on code exchanges by outcome', labelNames: ['outcome'], registers: [registry] });
  const ssoCallbacks = new Counter({
    name: 'school_auth_sso_callbacks_total',
    help: 'Single sign-on callbacks (and starts) by outcome: success, refused, unavailable, invalid_state, throttled',
    labelNames: ['outcome'],
    registers: [registry],
  });
  const passkeyLogins = new Counter({ name: 'school_auth_passkey_logins_total', help: 'Passkey-alone sign-in attempts by outcome', labelNames: ['outcome'], registers: [registry] });
  const counters: Record<AttemptCounter, Counter> = { logins, refreshes, mfaVerifications: secondFactors, ssoExchanges, passkeyLogins };
  const duration = new Histogram({
    name: 'school_auth_http_request_duration_seconds',
    help: 'Request duration by route, method and status',
    labelNames: ['route', 'method', 'status'],
    buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5],
    registers: [registry],
  });
  registerStateGauges(registry, sources);

  // What a route counts is declared on it (src/http/route-config.ts); the unmatched have no config.
  const observerFor = (route: string, config: FastifyContextConfig): ResponseObserver => {
    const outcomes = config.attemptCounter === undefined ? undefined : counters[config.attemptCounter];
    const signIn = config.signIn === true;
    const ssoStep = config.ssoBrowserStep;
    return (request, reply) => {
      duration.observe({ route, method: request.method, status: reply.statusCode }, reply.elapsedTime / 1000);
      outcomes?.inc({ outcome: outcomeOf(reply.statusCode, signIn) });
      if (ssoStep !== undefined) {
        const outcome = ssoOutcomeOf(reply.statusCode, reply.getHeader('location'), ssoStep === 'start');
        if (outcome !== undefined) ssoCallbacks.inc({ outcome });
      }
    };
  };
  // Each route observes its own answers with its label bound once: reading the route per request
  // (`request.routeOptions` builds a new object every time) cost more than the observation itself.
  app.addHook('onRoute', (route) => {
    const observe = observerFor(route.url, route.config ?? {});
    const observeHook: onResponseHookHandler = (request, reply, done) => {
      observe(request, reply);
      done();
    };
    route.onResponse = [route.onResponse ?? []].flat().concat(observeHook);
  });

  const metrics: Metrics = {
    observeUnmatched: observerFor('unmatched', {}),
    addRoute(target) {
      const schema = {
        summary: 'Prometheus metrics',
        response: {
          200: { description: 'Prometheus text exposition format', content: { 'text/plain': { schema: { type: 'string' } } } },
        },
      };
      target.get('/metrics', { schema }, async (_request, reply) => {
        return reply.header('content-type', registry.contentType).send(await registry.metrics());
      });
    },
  };
  metricsByApp.set(app, metrics);
  return metrics;
}
