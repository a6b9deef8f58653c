import { Type } from '@sinclair/typebox';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { AppContext } from '../../../auth/context.js';
import { ScimError } from '../../../auth/scim/scim-error.js';
import { getUser, listUsers } from '../../../auth/scim/user-read.js';
import { createUser, deleteUser, patchUser, replaceUser } from '../../../auth/scim/user-write.js';
import { scimActor } from '../../../auth/scim/user-fields.js';
import { requestContext } from '../../request-context.js';
import { SCIM_BODY_LIMIT, scimBody, scimClientOf, scimDoc, sendScim } from './scim-exchange.js';

const IdParams = Type.Object({ id: Type.String({ maxLength: 64, description: 'The admin id (SCIM `id`)' }) });
const ListQuery = Type.Object({
  filter: Type.Optional(Type.String({ description: 'e.g. userName eq "jdoe"; at most 10 comparisons' })),
  startIndex: Type.Optional(Type.String({ description: '1-based index of the first result' })),
  count: Type.Optional(Type.String({ description: 'results per page, at most 200' })),
  attributes: Type.Optional(Type.String()),
  excludedAttributes: Type.Optional(Type.String()),
});

type Query = { filter?: string; startIndex?: string; count?: string };
type Params = { id: string };

function integer(value: string | undefined, name: string): number | undefined {
  if (value === undefined) return undefined;
  if (!/^-?\d{1,9}$/.test(value)) throw new ScimError(400, 'invalidValue', `${name} must be an integer`);
  return Number(value);
}

const actorOf = (request: FastifyRequest) => scimActor(scimClientOf(request), requestContext(request));

/** `/Users`: the school's admins, as SCIM Users. */
export function registerUserRoutes(scope: FastifyInstance, deps: AppContext, base: string): void {
  scope.get<{ Querystring: Query }>('/Users', scimDoc("List or filter the school's administrators", { 200: 'A ListResponse of Users' }, { querystring: ListQuery }), async (request, reply) => {
    const { filter, startIndex, count } = request.query;
    const query = { filter, startIndex: integer(startIndex, 'startIndex'), count: integer(count, 'count') };
    return sendScim(reply, 200, await listUsers(deps, scimClientOf(request), query, base));
  });
  scope.post('/Users', { ...scimDoc('Create an administrator (without a password)', { 201: 'The User created' }), bodyLimit: SCIM_BODY_LIMIT }, async (request, reply) => {
    const client = scimClientOf(request);
    const id = await createUser(deps, actorOf(request), scimBody(request));
    const created = await getUser(deps, client, id, base);
    return sendScim(reply.header('location', `${base}/Users/${id}`), 201, created);
  });
  scope.get<{ Params: Params }>('/Users/:id', scimDoc('Read an administrator', { 200: 'The User' }, { params: IdParams }), async (request, reply) =>
    sendScim(reply, 200, await getUser(deps, scimClientOf(request), request.params.id, base)),
  );
  scope.put<{ Params: Params }>('/Users/:id', { ...scimDoc('Replace an administrator', { 200: 'The User as stored' }, { params: IdParams }), bodyLimit: SCIM_BODY_LIMIT }, async (request, reply) => {
    await replaceUser(deps, actorOf(request), request.params.id, scimBody(request));
    return sendScim(reply, 200, await getUser(deps, scimClientOf(request), request.params.id, base));
  });
  scope.patch<{ Params: Params }>('/Users/:id', { ...scimDoc('Change an administrator; active false ends every session', { 200: 'The User as stored' }, { params: IdParams }), bodyLimit: SCIM_BODY_LIMIT }, async (request, reply) => {
    await patchUser(deps, actorOf(request), request.params.id, scimBody(request), base);
    return sendScim(reply, 200, await getUser(deps, scimClientOf(request), request.params.id, base));
  });
  scope.delete<{ Params: Params }>('/Users/:id', scimDoc('Delete an administrator; every session ends at once', { 204: 'Deleted' }, { params: IdParams }), async (request, reply) => {
    await deleteUser(deps, actorOf(request), request.params.id);
    return reply.code(204).send();
  });
}
