import type { YogaInitialContext } from 'graphql-yoga';
import { authenticate } from './auth/request.js';
import { AuthenticationError } from './auth/tokens.js';
import type { Viewer } from './auth/viewer.js';
import type { PrismaClient } from './db/client.js';
import { unauthenticated } from './domain/errors.js';
import { graphQLErrorOf } from './errors.js';
import { requestIdOf } from './http/request-id.js';
import type { Logger } from './logger.js';
import type { Services } from './services.js';

export interface Context {
  requestId: string;
  /** The authenticated caller, or null for a request without a token (only introspection can run). */
  viewer: Viewer | null;
  prisma: PrismaClient;
  services: Services;
  log: Logger;
  /** Aborts when the client goes away (yoga's request signal): long waits end with it. */
  signal?: AbortSignal | undefined;
}

/** What the transports hand to yoga: graphql-ws passes the viewer of its socket. */
export interface ServerContext {
  viewer?: Viewer;
  /** graphql-ws: the `connection_init` payload. */
  connectionParams?: Record<string, unknown>;
  /** node:http: the incoming message, whose socket gives the client address. */
  req?: { socket?: { remoteAddress?: string | undefined } };
}

/** One context factory for HTTP, WebSocket and REST. */
export function createContextFactory(services: Services) {
  return async (initial: YogaInitialContext & ServerContext): Promise<Context> => {
    const requestId = requestIdOf(initial.request);
    const viewer = initial.viewer ?? (await viewerOf(services, initial));
    return {
      requestId,
      viewer,
      prisma: services.prisma,
      services,
      log: services.logger.child({ requestId, tenantId: viewer?.tenantId }),
      signal: initial.request.signal,
    };
  };
}

/**
 * HTTP requests reuse the verification made when the request arrived (see useAuthentication); WebSocket
 * operations carry their credential in the `connection_init` payload.
 */
async function viewerOf(
  services: Services,
  initial: YogaInitialContext & ServerContext,
): Promise<Viewer | null> {
  if (initial.connectionParams) {
    const fromSocket = initial.connectionParams.authorization ?? initial.connectionParams.Authorization;
    return verifySocketCredential(
      services,
      typeof fromSocket === 'string' ? fromSocket : initial.request.headers.get('authorization'),
    );
  }
  const outcome = await authenticate(initial.request, initial, services.tokens);
  if (outcome.status === 'failed') throw graphQLErrorOf(unauthenticated(outcome.error.message));
  if (outcome.status === 'anonymous') return null;
  await services.tenants.ensure(outcome.viewer.tenantId);
  return outcome.viewer;
}

/**
 * Verifies a socket's bearer credential (graphql-ws `connection_init`) and makes sure its tenant exists; null
 * when there is no credential. Each operation of the socket then passes the viewer to `authenticate`.
 */
export async function verifySocketCredential(
  services: Services,
  authorization: string | null,
): Promise<Viewer | null> {
  if (!authorization) return null;
  try {
    const viewer = await services.tokens.verify(authorization);
    await services.tenants.ensure(viewer.tenantId);
    return viewer;
  } catch (error) {
    if (error instanceof AuthenticationError) throw graphQLErrorOf(unauthenticated(error.message));
    throw error;
  }
}
