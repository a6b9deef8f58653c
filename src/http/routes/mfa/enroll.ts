import type { Static } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import { confirmTotp, startTotpEnrollment } from '../../../auth/mfa/enroll.js';
import { authenticateMfaPrincipal } from '../../../auth/mfa/principal.js';
import type { AppContext } from '../../../auth/context.js';
import { MfaErrorBodies, TotpConfirmBody, FactorConfirmed, TotpEnrollment } from './schemas.js';
import { TAG } from '../../plugins/docs-tags.js';
import { noStore, requestContext } from '../../request-context.js';
import { ErrorBodies, bodyErrors } from '../schemas.js';
import { loginBody } from '../login-answer.js';
import { bearerToken } from '../me.js';
import { totpQrSvg } from './totp-qr.js';

const bearerErrors = { 401: MfaErrorBodies.stepUp, 503: ErrorBodies.unavailable };

/** TOTP enrollment: a bearer access token, or the mfa_token for an admin's first factor. */
export function registerMfaEnrollRoutes(app: FastifyInstance, deps: AppContext): void {
  app.post(
    '/admin/auth/mfa/totp',
    {
      schema: {
        summary: 'Start enrolling a TOTP authenticator app (unconfirmed until a first code)',
        tags: [TAG.mfa],
        security: [{ bearerAuth: [] }],
        response: { 200: TotpEnrollment, ...bearerErrors },
      },
    },
    async (request, reply) => {
      const principal = await authenticateMfaPrincipal(deps, bearerToken(request.headers.authorization));
      const enrollment = await startTotpEnrollment(deps, principal, requestContext(request));
      return noStore(reply).send({
        factor_id: enrollment.factorId,
        secret: enrollment.secret,
        otpauth_uri: enrollment.otpauthUri,
        qr_svg: await totpQrSvg(enrollment.otpauthUri),
      });
    },
  );

  app.post<{ Body: Static<typeof TotpConfirmBody> }>(
    '/admin/auth/mfa/totp/confirm',
    {
      schema: {
        summary: 'Confirm a TOTP factor with a first code; the first factor also gets 10 recovery codes',
        tags: [TAG.mfa],
        security: [{ bearerAuth: [] }],
        body: TotpConfirmBody,
        response: {
          200: FactorConfirmed,
          ...bodyErrors({ ...bearerErrors, 403: MfaErrorBodies.locked, 404: MfaErrorBodies.notFound, 429: MfaErrorBodies.throttled }),
        },
      },
    },
    async (request, reply) => {
      const principal = await authenticateMfaPrincipal(deps, bearerToken(request.headers.authorization));
      const { factor_id, code } = request.body;
      const confirmed = await confirmTotp(deps, principal, factor_id, code, requestContext(request));
      const session = confirmed.session === undefined ? {} : loginBody(confirmed.session);
      return noStore(reply).send({ factor_id: confirmed.factorId, recovery_codes: confirmed.recoveryCodes, ...session });
    },
  );
}
