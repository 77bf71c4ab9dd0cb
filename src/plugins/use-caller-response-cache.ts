import { createHash } from 'node:crypto';
import { type Cache, hashSHA256, useResponseCache } from '@graphql-yoga/plugin-response-cache';
import type { GraphQLSchema } from 'graphql';
import type { Plugin } from 'graphql-yoga';
import { verifiedViewerOf } from '../auth/request.js';
import type { Viewer } from '../auth/viewer.js';

export interface UseCallerResponseCacheOptions {
  cache: Cache;
  schema: GraphQLSchema;
  /**
   * Lifetime in ms by schema coordinate. A document is cached only when every root field it selects is
   * listed here (a cached coordinate beside any other field is not cached). Default: nothing is cached.
   */
  ttlPerCoordinate?: Record<string, number>;
}

/** The verified credential's identity: the cache session. */
function sessionOf(viewer: Viewer): string {
  return JSON.stringify([viewer.tenantId, viewer.sub, [...viewer.roles].sort()]);
}

/** A digest of the session that prefixes every key (and so every ETag) of that session. */
function sessionTag(session: string): string {
  return createHash('sha256').update(session).digest('base64url').slice(0, 22);
}

/**
 * The response cache, scoped to the verified caller. The session comes from the credential verified when
 * the request arrived (useAuthentication), or from the viewer REST passes with its inner requests; a
 * request without a verified caller is neither served from nor stored in the cache. Keys start with a
 * digest of the session, so an `If-None-Match` naming another caller's entry never answers 304: such a
 * request runs uncached.
 */
export function useCallerResponseCache({
  cache,
  schema,
  ttlPerCoordinate = {},
}: UseCallerResponseCacheOptions): Plugin {
  const rootFields = Object.keys(schema.getQueryType()?.getFields() ?? {});
  const ttlPerSchemaCoordinate = {
    ...Object.fromEntries(rootFields.map((field) => [`Query.${field}`, 0])),
    ...ttlPerCoordinate,
  };
  return useResponseCache({
    cache,
    session: (request) => {
      const viewer = verifiedViewerOf(request);
      return viewer ? sessionOf(viewer) : null;
    },
    enabled: (request) => {
      const viewer = verifiedViewerOf(request);
      if (!viewer) return false;
      const etag = request.headers.get('if-none-match');
      return !etag || etag.startsWith(`${sessionTag(sessionOf(viewer))}.`);
    },
    // Variables are hashed in the order sent: another order only misses the cache. Keys are built for
    // every request, but one without a session is never looked up or stored (see `enabled`).
    buildResponseCacheKey: async ({ documentString, operationName, variableValues, sessionId }) => {
      if (!sessionId) return 'uncached';
      const digest = await hashSHA256(
        JSON.stringify([documentString, operationName ?? null, variableValues ?? {}, sessionId]),
      );
      return `${sessionTag(sessionId)}.${digest}`;
    },
    ttl: 0,
    ttlPerSchemaCoordinate,
    invalidateViaMutation: true,
  });
}
