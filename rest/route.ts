import type { TypedDocumentNode } from '@graphql-typed-document-node/core';
import type { z } from 'zod';

/** Where one GraphQL variable comes from in an HTTP request. */
export type ArgSource =
  | { from: 'path'; name: string }
  | { from: 'query'; name: string; type?: 'string' | 'int' }
  | { from: 'header'; name: string; type?: 'string' | 'int' }
  | { from: 'body'; field?: string };

export const fromPath = (name: string): ArgSource => ({ from: 'path', name });
export const fromQuery = (name: string, type: 'string' | 'int' = 'string'): ArgSource => ({
  from: 'query',
  name,
  type,
});
export const fromHeader = (name: string, type: 'string' | 'int' = 'string'): ArgSource => ({
  from: 'header',
  name,
  type,
});
/** The whole JSON body, or one field of it (a route whose operation takes several arguments from the body). */
export const fromBody = (field?: string): ArgSource => (field ? { from: 'body', field } : { from: 'body' });

export type HttpMethod = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';

/**
 * A REST route is a named GraphQL operation plus how the request fills its variables and how its result
 * becomes the response. Roles and input rules come from the GraphQL field the operation calls.
 */
// biome-ignore lint/suspicious/noExplicitAny: the route table holds operations of every result and variable type
export interface Route<Result = any, Variables = any> {
  method: HttpMethod;
  /** OpenAPI-style path, e.g. `/api/v1/agents/{role}/chat`. */
  path: string;
  summary: string;
  description?: string;
  tag: string;
  document: TypedDocumentNode<Result, Variables>;
  /** Variable name → where it comes from. Path parameters are named as in `path`. */
  variables: Record<string, ArgSource>;
  /** Success status. */
  status: number;
  /**
   * A second success answer, for an operation whose result is of two kinds: when `when` holds, the
   * answer has this status and body (documented beside the first).
   */
  alternative?: {
    status: number;
    when: (data: Result) => boolean;
    respond: (data: Result) => unknown;
    description: string;
    responseSchema: z.ZodType;
    responseExample: unknown;
  };
  /**
   * For an operation whose root field reads as null when the caller may not see the thing (`task(id)`):
   * the detail of the 404 to answer instead, when the data says it is missing; null otherwise.
   */
  missing?: (data: Result, variables: Variables) => string | null;
  /** Builds the response body from the operation's data. */
  respond: (data: Result, request: { requestId: string }) => unknown;
  /** Extra response headers on success (e.g. ETag). */
  headers?: (data: Result) => Record<string, string>;
  /** Largest accepted body in bytes. Default 1 MiB. */
  maxBodyBytes?: number;
  /** Documentation of the success body (OpenAPI), derived from the operation by `responseSchemaOf`. */
  responseSchema?: z.ZodType;
  /** A request body example for the docs. */
  example?: unknown;
  /** A success body example for the docs. */
  responseExample?: unknown;
  /** Success response headers for the docs: name → meaning. */
  responseHeaders?: Record<string, string>;
  /**
   * The state errors this route answers, for the docs: status → when. 401, 403 (from the field's roles),
   * 405, 413 (routes with a body), 422 and 429 are documented for every route they apply to; a 403 given
   * here is a rule of the operation beyond its roles (whose task it is, say).
   */
  errors?: Partial<Record<400 | 403 | 404 | 409 | 412 | 502 | 503 | 504, string>>;
}

export function defineRoute<Result, Variables>(route: Route<Result, Variables>): Route<Result, Variables> {
  return route;
}
