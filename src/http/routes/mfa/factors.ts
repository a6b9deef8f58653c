import { Type } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import { describeFactors, removeFactor, renewRecoveryCodes } from '../../../auth/mfa/manage.js';
import { authenticateMfaPrincipal } from '../../../auth/mfa/principal.js';
import { authenticateAccessToken } from '../../../auth/sessions/current-admin.js';
import type { AppContext } from '../../../auth/context.js';
import { FactorList, MfaErrorBodies, RecoveryCodes } from './schemas.js';
import { TAG } from '../../plugins/docs-tags.js';
import { noStore, requestContext } from '../../request-context.js';
import { ErrorBodies } from '../schemas.js';
import { bearerToken } from '../me.js';

const isoTime = (seconds: number) => new Date(seconds * 1000).toISOString();

/** Listing and removing factors, renewing recovery codes: with a bearer access token only. */
export function registerMfaFactorRoutes(app: FastifyInstance, deps: AppContext): void {
  app.get(
    '/admin/auth/mfa',
    {
      schema: {
        summary: "The admin's second factors and recovery codes left",
        tags: [TAG.mfa],
        security: [{ bearerAuth: [] }],
        response: { 200: FactorList, 401: ErrorBodies.invalidAccessToken, 503: ErrorBodies.unavailable },
      },
    },
    async (request) => {
      const claims = await authenticateAccessToken(deps, bearerToken(request.headers.authorization));
      const described = await describeFactors(deps, claims.sub);
      return {
        factors: described.factors.map((factor) => ({
          factor_id: factor.factorId,
          type: factor.type,
          name: factor.name,
          created_at: isoTime(factor.createdAt),
          last_used_at: factor.lastUsedAt === null ? null : isoTime(factor.lastUsedAt),
          discoverable: factor.discoverable,
        })),
        recovery_codes_left: described.recoveryCodesLeft,
      };
    },
  );

  app.delete<{ Params: { factor_id: string } }>(
    '/admin/auth/mfa/:factor_id',
    {
      schema: {
        summary: 'Remove a second factor (aal2 token)',
        tags: [TAG.mfa],
        security: [{ bearerAuth: [] }],
        params: Type.Object({ factor_id: Type.String() }),
        response: { 204: { type: 'null', description: 'Removed' }, 401: MfaErrorBodies.stepUp, 404: MfaErrorBodies.notFound, 503: ErrorBodies.unavailable },
      },
    },
    async (request, reply) => {
      const principal = await authenticateMfaPrincipal(deps, bearerToken(request.headers.authorization));
      await removeFactor(deps, principal, request.params.factor_id, requestContext(request));
      return reply.code(204).send();
    },
  );

  app.post(
    '/admin/auth/mfa/recovery-codes',
    {
      schema: {
        summary: 'Replace the recovery codes with a new set (aal2 token)',
        tags: [TAG.mfa],
        security: [{ bearerAuth: [] }],
        response: { 200: RecoveryCodes, 401: MfaErrorBodies.stepUp, 409: MfaErrorBodies.notEnrolled, 503: ErrorBodies.unavailable },
      },
    },
    async (request, reply) => {
      const principal = await authenticateMfaPrincipal(deps, bearerToken(request.headers.authorization));
      const codes = await renewRecoveryCodes(deps, principal, requestContext(request));
      return noStore(reply).send({ recovery_codes: codes });
    },
  );
}
