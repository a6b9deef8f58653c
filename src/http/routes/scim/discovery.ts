import type { FastifyInstance } from 'fastify';
import { ScimError } from '../../../auth/scim/scim-error.js';
import { LIST_SCHEMA, MAX_PAGE } from '../../../auth/scim/user-read.js';
import { COMMON_ATTRIBUTES, ENTERPRISE_ATTRIBUTES, ENTERPRISE_SCHEMA, USER_ATTRIBUTES, USER_SCHEMA } from '../../../auth/scim/user-schema.js';
import { scimDoc, sendScim } from './scim-exchange.js';

const CORE = 'urn:ietf:params:scim:schemas:core:2.0';
const doc = (summary: string) => scimDoc(summary, { 200: summary });

/** What this service supports (RFC 7643 §5): PATCH, filters; no bulk, sort, ETags, password change or groups. */
function serviceProviderConfig(base: string) {
  return {
    schemas: [`${CORE}:ServiceProviderConfig`],
    patch: { supported: true },
    bulk: { supported: false, maxOperations: 0, maxPayloadSize: 0 },
    filter: { supported: true, maxResults: MAX_PAGE },
    changePassword: { supported: false },
    sort: { supported: false },
    etag: { supported: false },
    authenticationSchemes: [
      { type: 'oauthbearertoken', name: 'SCIM token', description: 'A bearer token from: school-auth scim token create --school ID', primary: true },
    ],
    meta: { resourceType: 'ServiceProviderConfig', location: `${base}/ServiceProviderConfig` },
  };
}

function userResourceType(base: string) {
  return {
    schemas: [`${CORE}:ResourceType`],
    id: 'User',
    name: 'User',
    endpoint: '/Users',
    description: "A school's administrator. Groups are not offered.",
    schema: USER_SCHEMA,
    schemaExtensions: [{ schema: ENTERPRISE_SCHEMA, required: false }],
    meta: { resourceType: 'ResourceType', location: `${base}/ResourceTypes/User` },
  };
}

function schemas(base: string) {
  const schema = (id: string, name: string, attributes: readonly unknown[]) => ({
    schemas: [`${CORE}:Schema`],
    id,
    name,
    attributes,
    meta: { resourceType: 'Schema', location: `${base}/Schemas/${id}` },
  });
  return [schema(USER_SCHEMA, 'User', [...COMMON_ATTRIBUTES.slice(1), ...USER_ATTRIBUTES]), schema(ENTERPRISE_SCHEMA, 'EnterpriseUser', ENTERPRISE_ATTRIBUTES)];
}

const list = (resources: readonly unknown[]) => ({ schemas: [LIST_SCHEMA], totalResults: resources.length, startIndex: 1, itemsPerPage: resources.length, Resources: resources });

/** `/ServiceProviderConfig`, `/ResourceTypes` and `/Schemas`: how a client learns what the service does. */
export function registerDiscoveryRoutes(scope: FastifyInstance, base: string): void {
  scope.get('/ServiceProviderConfig', doc('What this SCIM service supports'), async (_request, reply) => sendScim(reply, 200, serviceProviderConfig(base)));
  scope.get('/ResourceTypes', doc('The resource types: User'), async (_request, reply) => sendScim(reply, 200, list([userResourceType(base)])));
  scope.get<{ Params: { id: string } }>('/ResourceTypes/:id', doc('One resource type'), async (request, reply) => {
    if (request.params.id !== 'User') throw new ScimError(404, undefined, `ResourceType ${request.params.id} not found`);
    return sendScim(reply, 200, userResourceType(base));
  });
  scope.get('/Schemas', doc('The User schema and its enterprise extension'), async (_request, reply) => sendScim(reply, 200, list(schemas(base))));
  scope.get<{ Params: { id: string } }>('/Schemas/:id', doc('One schema'), async (request, reply) => {
    const found = schemas(base).find((schema) => schema.id === request.params.id);
    if (found === undefined) throw new ScimError(404, undefined, `Schema ${request.params.id} not found`);
    return sendScim(reply, 200, found);
  });
}
