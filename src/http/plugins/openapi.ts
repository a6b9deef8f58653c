import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import type { FastifyInstance } from 'fastify';

/**
 * The OpenAPI 3.1 document is generated from the route schemas, so it cannot drift from what the
 * routes validate and answer. Must be registered before the routes.
 */
export async function registerOpenApi(app: FastifyInstance, options: { docs: boolean }): Promise<void> {
  await app.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'school-auth',
        version: '1',
        description:
          'Authentication for school administrators. Every duration (`expires_in`, `refresh_expires_in`) is in seconds. ' +
          'Every error body is JSON with a `detail` member.',
      },
      components: {
        securitySchemes: { bearerAuth: { type: 'http', scheme: 'bearer', bearerFormat: 'JWT' } },
      },
    },
  });
  app.get('/openapi.json', { schema: { hide: true } }, () => app.swagger());
  if (!options.docs) return;
  // Served from the package's own copy of Swagger UI: no CDN, so it works on closed networks.
  await app.register(swaggerUi, {
    routePrefix: '/docs',
    uiConfig: { docExpansion: 'list', deepLinking: false, tryItOutEnabled: true },
    staticCSP: true,
  });
}
