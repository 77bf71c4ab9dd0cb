import { createHash } from 'node:crypto';
import { type Cache, hashSHA256, useResponseCache } from '@graphql-yoga/plugin-response-cache';
import type { DocumentNode, GraphQLSchema } from 'graphql';
import type { Plugin } from 'graphql-yoga';
import { verifiedViewerOf } from '../auth/request.js';
import { viewerIdentity as sessionOf } from '../auth/viewer.js';
import { operationOf, parseWithinLimits, rootFieldNamesOf } from '../validation/document-limits.js';

export interface UseCallerResponseCacheOptions {
  cache: Cache;
  schema: GraphQLSchema;
  /**
   * Lifetime in ms by schema coordinate. A document is cached only when every root field it selects is
   * listed here (a cached coordinate beside any other field is not cached). Default: nothing is cached.
   */
  ttlPerCoordinate?: Record<string, number>;
}

/**
 * What the cache does with a document: `cached` when it may be served from or stored in the cache (a query
 * whose root fields all have a lifetime), `mutation` when it runs through the plugin only so that the
 * entities it returns invalidate cached entries, `bypass` for everything else (most traffic), which
 * skips the plugin: no key is hashed and the cache is never consulted.
 */
type CacheUse = 'cached' | 'mutation' | 'bypass';

/** Documents remembered with their use; longer documents are classified on every request. */
const MAX_REMEMBERED_DOCUMENTS = 1000;
const MAX_REMEMBERED_DOCUMENT_LENGTH = 8192;

/**
 * Decides a document's use from its text alone, before yoga parses and validates it: so it is parsed within
 * the token and nesting limits, and its root fields are collected visiting each fragment once. A document
 * that does not parse within them, or whose operation cannot be picked, bypasses the cache: yoga answers it
 * with an error, never with data.
 */
function cacheUseOf(
  documentString: string,
  operationName: string | undefined,
  cachedFields: Set<string>,
): CacheUse {
  let document: DocumentNode;
  try {
    document = parseWithinLimits(documentString);
  } catch {
    return 'bypass';
  }
  const operation = operationOf(document, operationName);
  if (!operation) return 'bypass';
  if (operation.operation === 'mutation') return 'mutation';
  if (operation.operation !== 'query') return 'bypass';
  const fields = rootFieldNamesOf(document, operation);
  fields.delete('__typename');
  if (fields.size === 0) return 'bypass';
  for (const field of fields) if (!cachedFields.has(field)) return 'bypass';
  return 'cached';
}

/** cacheUseOf, remembered for the most recently seen documents. */
function rememberedCacheUse(
  cachedFields: Set<string>,
): (documentString: string, operationName?: string) => CacheUse {
  const remembered = new Map<string, CacheUse>();
  return (documentString, operationName) => {
    if (documentString.length > MAX_REMEMBERED_DOCUMENT_LENGTH) {
      return cacheUseOf(documentString, operationName, cachedFields);
    }
    const key = `${operationName ?? ''}\n${documentString}`;
    let use = remembered.get(key);
    if (use === undefined) {
      use = cacheUseOf(documentString, operationName, cachedFields);
      if (remembered.size >= MAX_REMEMBERED_DOCUMENTS)
        remembered.delete(remembered.keys().next().value as string);
    } else {
      remembered.delete(key);
    }
    remembered.set(key, use);
    return use;
  };
}

/** A digest of the session that prefixes every key (and so every ETag) of that session. */
function sessionTag(session: string): string {
  return createHash('sha256').update(session).digest('base64url').slice(0, 22);
}

/**
 * The response cache, scoped to the verified caller. The session comes from the credential verified when
 * the request arrived (useAuthentication), or from the socket's viewer for a graphql-ws operation; a
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
  const cachedFields = new Set(
    Object.entries(ttlPerCoordinate)
      .filter(([coordinate, ttl]) => coordinate.startsWith('Query.') && ttl > 0)
      .map(([coordinate]) => coordinate.slice('Query.'.length)),
  );
  const cacheUse = rememberedCacheUse(cachedFields);
  /** Requests whose document skips the cache (decided while their key is built, before `enabled`). */
  const bypassed = new WeakSet<Request>();
  return useResponseCache({
    cache,
    session: (_request, context) => {
      const viewer = verifiedViewerOf(context);
      return viewer ? sessionOf(viewer) : null;
    },
    enabled: (request, context) => {
      const viewer = verifiedViewerOf(context);
      if (!viewer || bypassed.has(request)) return false;
      const etag = request.headers.get('if-none-match');
      return !etag || etag.startsWith(`${sessionTag(sessionOf(viewer))}.`);
    },
    // Variables are hashed in the order sent: another order only misses the cache. A request without a
    // session, or whose document bypasses the cache, is never looked up or stored (see `enabled`); a
    // mutation's key is never looked up either, as no stored key lacks the session digest.
    buildResponseCacheKey: async ({ documentString, operationName, variableValues, sessionId, request }) => {
      if (!sessionId) return 'uncached';
      const use = cacheUse(documentString, operationName ?? undefined);
      if (use === 'bypass') {
        bypassed.add(request);
        return 'uncached';
      }
      if (use === 'mutation') return 'mutation';
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
