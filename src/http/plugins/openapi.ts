import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import type { FastifyInstance } from 'fastify';
import { DOCS_FAVICON_SVG, DOCS_LOGO_SVG, PACKAGE_VERSION } from './docs-branding.js';
import { OPENAPI_TAGS } from './docs-tags.js';

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
        version: PACKAGE_VERSION,
        description:
          'Authentication for school administrators. Every duration (`expires_in`, `refresh_expires_in`) is in seconds. ' +
          'Every error body is JSON with a `detail` member.',
      },
      tags: OPENAPI_TAGS,
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
    logo: { type: 'image/svg+xml', content: DOCS_LOGO_SVG },
    theme: {
      title: 'school-auth API',
      favicon: [{ filename: 'favicon.svg', rel: 'icon', type: 'image/svg+xml', sizes: 'any', content: DOCS_FAVICON_SVG }],
    },
  });
}
