import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import type { FastifyInstance } from 'fastify';
import { PACKAGE_VERSION } from '../../package-version.js';
import { DOCS_FAVICON_SVG, DOCS_LOGO_SVG } from './docs-branding.js';
import { OPENAPI_TAGS } from './docs-tags.js';

/**
 * The docs page's policy: everything from the service itself. Swagger UI's standalone layout
 * renders its own small logo (which ours then replaces) with a <style> element; its hash is
 * allowed so the console shows no violation. A new Swagger UI version may change that element:
 * test/http/plugins/docs-browser.test.ts fails on any violation.
 */
const SWAGGER_LOGO_STYLE = "'sha256-RL3ie0nH+Lzz2YNqQN83mnU0J1ot4QL7b99vMdIX99w='";
const DOCS_CSP = {
  'default-src': "'self'",
  'base-uri': "'self'",
  'font-src': "'self' data:",
  'frame-ancestors': "'self'",
  'img-src': "'self' data:",
  'object-src': "'none'",
  'script-src': "'self'",
  'script-src-attr': "'none'",
  'style-src': `'self' ${SWAGGER_LOGO_STYLE}`,
};

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
        securitySchemes: {
          bearerAuth: { type: 'http', scheme: 'bearer', bearerFormat: 'JWT' },
          scimToken: { type: 'http', scheme: 'bearer', description: 'A SCIM token: school-auth scim token create --school ID' },
        },
      },
    },
  });
  app.get('/openapi.json', { schema: { hide: true } }, () => app.swagger());
  if (!options.docs) return;
  // Served from the package's own copy of Swagger UI: no CDN, so it works on closed networks.
  await app.register(swaggerUi, {
    routePrefix: '/docs',
    // `urls` rather than the plugin's own /docs/json: the page links to the document we publish.
    uiConfig: { docExpansion: 'list', deepLinking: false, tryItOutEnabled: true, urls: [{ url: '/openapi.json', name: 'school-auth' }] },
    staticCSP: DOCS_CSP,
    logo: { type: 'image/svg+xml', content: DOCS_LOGO_SVG },
    theme: {
      title: 'school-auth API',
      favicon: [{ filename: 'favicon.svg', rel: 'icon', type: 'image/svg+xml', sizes: 'any', content: DOCS_FAVICON_SVG }],
    },
  });
}
