import { randomUUID } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { TypedDocumentNode } from '@graphql-typed-document-node/core';
import { type ExecutionResult, print } from 'graphql';
import pino from 'pino';
import { type App, type AppOptions, createApp } from '../../src/app.js';
import { signToken } from '../../src/auth/tokens.js';
import type { Role } from '../../src/auth/viewer.js';
import { loadConfig } from '../../src/config.js';
import type { Database } from '../../src/db/client.js';
import type { Logger } from '../../src/logger.js';
import type { Tracing } from '../../src/observability/tracing.js';
import { createTestDatabase, type TestDatabase } from './database.js';

/** The egress resolver of tests that give none: every name is unknown. */
async function offlineLookup(hostname: string): Promise<never> {
  throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname} (tests resolve no names)`), {
    code: 'ENOTFOUND',
  });
}

export const TEST_SECRET = 'test-secret-that-is-long-enough-for-hs256-signing';

export interface Caller {
  tenantId: string;
  sub: string;
  roles: Role[];
  token: string;
}

export interface TestApp {
  app: App;
  db: Database;
  dataDir: string;
  /** A signed token for a caller (new tenant unless given; `agentRoles`: its `agent_roles` claim). */
  caller(
    roles: Role[],
    options?: { tenantId?: string; sub?: string; agentRoles?: string[] },
  ): Promise<Caller>;
  /** Runs a GraphQL operation in-process through yoga. */
  graphql<Result, Variables>(
    document: TypedDocumentNode<Result, Variables> | string,
    variables: Variables | undefined,
    caller?: Caller | null,
  ): Promise<ExecutionResult<Result> & { status: number }>;
  /** Calls a REST route in-process; `body` objects are sent as JSON, strings as they are. */
  rest(
    method: string,
    path: string,
    options?: { caller?: Caller | null; body?: unknown; headers?: Record<string, string> },
  ): Promise<{ status: number; body: any; headers: Headers }>;
  close(): Promise<void>;
}

export interface TestAppOptions {
  /** Share a database with another instance (two-instance tests). */
  database?: TestDatabase;
  env?: Record<string, string>;
  /** Tracing with an exporter the test reads. */
  tracing?: Tracing;
  /** The instance's logger (default: silent, or TEST_LOG_LEVEL). */
  logger?: Logger;
  /** Certificate authority and resolver of the egress client (test HTTPS servers on loopback). */
  egress?: AppOptions['egress'];
  /** Webhook retry schedule, disable threshold and call timeout. */
  webhooks?: AppOptions['webhooks'];
}

/** One app instance on a fresh database (PGlite, or PostgreSQL + Redis in the postgres project). */
export async function createTestApp(options: TestAppOptions = {}): Promise<TestApp> {
  const database = options.database ?? (await createTestDatabase());
  const dataDir = await mkdtemp(path.join(tmpdir(), 'boardroom-test-'));
  const config = loadConfig({
    AUTH_JWT_SECRET: TEST_SECRET,
    DATA_DIR: dataDir,
    NODE_ENV: 'test',
    LOG_LEVEL: 'silent',
    // Suites send many requests with one token; the limit itself is tested with a low value.
    RATE_LIMIT_PER_MINUTE: '1000000',
    AUTH_FAILURES_PER_MINUTE: '1000000',
    ...(process.env.TEST_DB === 'postgres' && process.env.TEST_REDIS_URL
      ? { REDIS_URL: process.env.TEST_REDIS_URL }
      : {}),
    ...options.env,
  });
  const app = await createApp(config, {
    db: database.db,
    logger: options.logger ?? pino({ level: process.env.TEST_LOG_LEVEL ?? 'silent' }),
    tracing: options.tracing,
    // Tests resolve no names through the machine's DNS: a connector call reaches only what a test answers.
    egress: options.egress ?? { lookup: offlineLookup },
    webhooks: options.webhooks,
  });
  await app.start();

  return {
    app,
    db: database.db,
    dataDir,
    async caller(
      roles,
      { tenantId = randomUUID(), sub = `user-${randomUUID().slice(0, 8)}`, agentRoles } = {},
    ) {
      const token = await signToken(TEST_SECRET, { tenantId, sub, roles, agentRoles });
      return { tenantId, sub, roles, token };
    },
    async graphql(document, variables, caller) {
      const response = await app.yoga.fetch('http://yoga/graphql', {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          accept: 'application/graphql-response+json, application/json',
          ...(caller ? { authorization: `Bearer ${caller.token}` } : {}),
        },
        body: JSON.stringify({ query: typeof document === 'string' ? document : print(document), variables }),
      });
      return { status: response.status, ...((await response.json()) as ExecutionResult<never>) };
    },
    async rest(method, route, { caller, body, headers = {} } = {}) {
      const response = await app.yoga.fetch(`http://yoga${route}`, {
        method,
        headers: {
          ...(body !== undefined ? { 'content-type': 'application/json' } : {}),
          ...(caller ? { authorization: `Bearer ${caller.token}` } : {}),
          ...headers,
        },
        ...(body !== undefined ? { body: typeof body === 'string' ? body : JSON.stringify(body) } : {}),
      });
      const text = await response.text();
      let parsed: unknown = text;
      try {
        parsed = text ? JSON.parse(text) : null;
      } catch {}
      return { status: response.status, body: parsed, headers: response.headers };
    },
    async close() {
      await app.close();
      if (!options.database) await database.drop();
      await rm(dataDir, { recursive: true, force: true });
    },
  };
}

/** The REST answer's body for the path parameter `name` given as `not-a-uuid` (a 422). */
export const notAUuidAtPath = (name: string) => ({
  detail: [
    {
      input: 'not-a-uuid',
      loc: ['path', name],
      msg: 'Input should be a valid UUID, invalid character: expected an optional prefix of `urn:uuid:` followed by [0-9a-fA-F-], found `n` at 1',
      type: 'uuid_parsing',
    },
  ],
});
