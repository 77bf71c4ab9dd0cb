import SchemaBuilder from '@pothos/core';
import PrismaPlugin from '@pothos/plugin-prisma';
import ScopeAuthPlugin from '@pothos/plugin-scope-auth';
import type { GraphQLResolveInfo } from 'graphql';
import { DateTimeResolver, JSONResolver, SafeIntResolver } from 'graphql-scalars';
import type { Viewer } from './auth/viewer.js';
import type { Context } from './context.js';
import type { ReceivedFile } from './domain/agents/attachments.js';
import { forbidden, unauthenticated } from './domain/errors.js';
import type PrismaTypes from './generated/pothos-prisma-types.js';
import { getDatamodel } from './generated/pothos-prisma-types.js';
import InputRulesPlugin from './validation/input-rules-plugin.js';

/** The context of a field guarded by any role scope: the viewer is known. */
export type AuthedContext = Context & { viewer: Viewer };

export interface AuthScopes {
  authenticated: boolean;
  chairman: boolean;
  operator: boolean;
  member: boolean;
  agent: boolean;
}

/** Scope values of a viewer; also used by rest/ to answer 403 before validating a body. */
export function scopesOf(viewer: Viewer | null): AuthScopes {
  return {
    authenticated: !!viewer,
    chairman: !!viewer?.roles.includes('chairman'),
    operator: !!viewer?.roles.includes('operator'),
    member: !!viewer?.roles.includes('member'),
    agent: !!viewer?.roles.includes('agent'),
  };
}

/**
 * Where a Prisma field whose prepared query its resolver never used is reported. The schema is built when
 * this module is imported, before any configuration is read, so the app installs the reporter from its
 * configuration (development: a warning in the log; production: none) with `reportUnusedPrismaQueries`.
 */
let unusedQueryReporter: ((info: GraphQLResolveInfo) => void) | null = null;

export function reportUnusedPrismaQueries(reporter: ((info: GraphQLResolveInfo) => void) | null): void {
  unusedQueryReporter = reporter;
}

export const builder = new SchemaBuilder<{
  Context: Context;
  AuthScopes: AuthScopes;
  AuthContexts: { [Scope in keyof AuthScopes]: AuthedContext };
  DefaultAuthStrategy: 'any';
  PrismaTypes: PrismaTypes;
  Scalars: {
    DateTime: { Input: Date; Output: Date | string };
    JSON: { Input: unknown; Output: unknown };
    /** Integers up to 2^53 - 1 (64-bit counts such as tokens), exact in JSON. */
    SafeInt: { Input: number; Output: number };
    /** A file part of a GraphQL multipart request (input only). */
    File: { Input: ReceivedFile; Output: never };
  };
  DefaultFieldNullability: false;
}>({
  // Input rules after auth scopes: 401 and 403 come before 422.
  plugins: [ScopeAuthPlugin, PrismaPlugin, InputRulesPlugin],
  defaultFieldNullability: false,
  scopeAuth: {
    authorizeOnSubscribe: true,
    authScopes: (context) => scopesOf(context.viewer),
    unauthorizedError: (_parent, context) => (context.viewer ? forbidden() : unauthenticated()),
  },
  prisma: {
    client: (context) => context.prisma,
    dmmf: getDatamodel(),
    exposeDescriptions: false,
    filterConnectionTotalCount: true,
    onUnusedQuery: (info) => unusedQueryReporter?.(info),
  },
});

builder.addScalarType('DateTime', DateTimeResolver);
builder.addScalarType('JSON', JSONResolver);
builder.addScalarType('SafeInt', SafeIntResolver);

// Every root field needs an authenticated caller unless it says otherwise; role scopes narrow further.
builder.queryType({ authScopes: { authenticated: true } });
builder.mutationType({ authScopes: { authenticated: true } });
builder.subscriptionType({ authScopes: { authenticated: true } });
