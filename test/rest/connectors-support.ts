import { randomBytes } from 'node:crypto';
import type { ServerResponse } from 'node:http';
import { afterAll, beforeAll, expect } from 'vitest';
import type { RunningServer } from '../../src/server.js';
import { type Caller, createTestApp, type TestApp } from '../support/app.js';
import {
  createTestCertificate,
  fixedLookup,
  startHttpsServer,
  type TestHttpsServer,
} from '../support/https-server.js';
import { listen } from '../support/ws.js';

/** The host connectors name for the loopback upstream; the app's egress resolver sends it to 127.0.0.1. */
export const UPSTREAM_HOST = 'api.acme-payments.com';
/** A second host the upstream's certificate is valid for, resolved to 127.0.0.1 as well. */
export const OTHER_UPSTREAM_HOST = 'files.acme-payments.com';

export interface Upstream {
  /** The loopback HTTPS server connectors call, with a certificate of its own. */
  server: TestHttpsServer;
  /** createTestApp's `egress`: trusts the server's certificate and resolves both upstream hosts to it. */
  egress: { ca: string; lookup: ReturnType<typeof fixedLookup> };
  /** The env that lets the server's port through the egress guard. */
  allow: { CONNECTOR_EGRESS_ALLOW: string };
}

/**
 * A loopback HTTPS upstream: a connector whose base_url is `https://${UPSTREAM_HOST}:${server.port}/…`
 * reaches it from an app made with `egress` and `allow`. `lookup` adds (or replaces) host names.
 */
export async function startUpstream(lookup: Record<string, string | string[]> = {}): Promise<Upstream> {
  const certificate = await createTestCertificate();
  const server = await startHttpsServer(certificate);
  return {
    server,
    egress: {
      ca: certificate.cert,
      lookup: fixedLookup({ [UPSTREAM_HOST]: '127.0.0.1', [OTHER_UPSTREAM_HOST]: '127.0.0.1', ...lookup }),
    },
    allow: { CONNECTOR_EGRESS_ALLOW: `127.0.0.1:${server.port}` },
  };
}

/** The env that makes an app seal credentials, under a fresh key. */
export const sealingKey = () => ({ CONNECTOR_SECRETS_KEY: `k1:${randomBytes(32).toString('base64')}` });

export interface ConnectorUpstream {
  /** The loopback HTTPS server connectors call, with a certificate of its own. */
  upstream: TestHttpsServer;
  t: TestApp;
  /** The app listening on a loopback port (for MCP clients, agent runtimes, browsers). */
  server: RunningServer;
  /** Stops the server, the app and the upstream, in that order. */
  close(): Promise<void>;
}

/**
 * startUpstream and an app, listening on a port, that reaches the upstream and seals credentials.
 */
export async function startConnectorUpstream(): Promise<ConnectorUpstream> {
  const { server: upstream, egress, allow } = await startUpstream();
  let t: TestApp | undefined;
  let server: RunningServer | undefined;
  const close = async () => {
    await server?.close();
    await t?.close();
    await upstream.close();
  };
  try {
    t = await createTestApp({ env: { ...allow, ...sealingKey() }, egress });
    server = await listen(t);
  } catch (error) {
    await close();
    throw error;
  }
  return { upstream, t, server, close };
}

/**
 * startConnectorUpstream for the tests of the block that calls this: started before them, closed after
 * them. `ready` receives it first, to set the block's variables and answer the upstream's routes.
 */
export function withConnectorUpstream(ready: (started: ConnectorUpstream) => unknown): void {
  let started: ConnectorUpstream | undefined;
  beforeAll(async () => {
    started = await startConnectorUpstream();
    await ready(started);
  });
  afterAll(() => started?.close());
}

/** The ledger the agent tests' models ask about: one overdue invoice, at `GET /v1/invoices`. */
export function serveInvoices(upstream: TestHttpsServer): void {
  upstream.route('/v1/invoices', (_request, _body, response) => {
    response
      .writeHead(200, { 'content-type': 'application/json' })
      .end(JSON.stringify([{ id: 'inv_1', amount: 1200, status: 'overdue' }]));
  });
}

/** `GET /invoices`, filtered by `status`: the ledger endpoint the agent tests' models call. */
export const GET_INVOICES = {
  method: 'GET',
  path: '/invoices',
  query_params: { status: { type: 'string' } },
};

/**
 * Forges the connector `Ledger` on the upstream (`endpoints`: default GET_INVOICES) for the chairman's
 * tenant, and answers its id.
 */
export async function forgeLedger(
  t: TestApp,
  chairman: Caller,
  upstream: TestHttpsServer,
  { description, endpoints = [GET_INVOICES] }: { description?: string; endpoints?: unknown[] } = {},
): Promise<string> {
  const created = await t.rest('POST', '/api/v1/forge/connectors', {
    caller: chairman,
    body: {
      template: {
        name: 'Ledger',
        base_url: `https://${UPSTREAM_HOST}:${upstream.port}/v1`,
        auth_type: 'none',
        ...(description ? { description } : {}),
        endpoints,
        rate_limits: { per_minute: 60 },
      },
    },
  });
  expect(created.status).toBe(201);
  return created.body.id as string;
}

/** `POST /customers` with a body of an email and nothing else: the write that connector tests gate and call. */
export const POST_CUSTOMER = {
  method: 'POST',
  path: '/customers',
  body_schema: {
    type: 'object',
    required: ['email'],
    properties: { email: { type: 'string' } },
    additionalProperties: false,
  },
};

/** The upstream's answer to `POST /customers`: 201 with the customer it was sent and a new id. */
export const customerCreated = (response: ServerResponse, body: string) =>
  response
    .writeHead(201, { 'content-type': 'application/json' })
    .end(JSON.stringify({ id: 'cus_2', ...JSON.parse(body) }));

/** A minimal template that passes every check; the validation tests change one field of it at a time. */
export const VALID_TEMPLATE = {
  name: 'Orders API',
  base_url: 'https://api.example.com/v2',
  auth_type: 'api_key',
  endpoints: [{ method: 'GET', path: '/orders' }],
  rate_limits: { per_minute: 10, per_hour: 100, per_day: 1000 },
};

/** A POST/PUT body whose template is VALID_TEMPLATE with `overrides`. */
export const withTemplate = (overrides: Record<string, unknown>) => ({
  template: { ...VALID_TEMPLATE, ...overrides },
});

/** A full template (every part given) named `name`, with `overrides`. */
export function template(name: string, overrides: Record<string, unknown> = {}) {
  return {
    name,
    base_url: 'https://api.example.com/v1',
    auth_type: 'bearer',
    description: 'Customer records',
    endpoints: [
      {
        method: 'GET',
        path: '/customers',
        query_params: { limit: { type: 'integer' } },
        response_schema: { type: 'array' },
      },
      {
        method: 'POST',
        path: '/customers',
        body_schema: { type: 'object', properties: { email: { type: 'string' } } },
      },
    ],
    rate_limits: { per_minute: 60, per_hour: 1000, per_day: 10000 },
    ...overrides,
  };
}

export interface CreatedConnector {
  id: string;
  version: number;
  template: Record<string, unknown>;
  created_at: string;
  updated_at: string;
}

/** Creates a connector from `template(name, overrides)` as `caller` and expects 201. */
export async function createConnector(
  t: TestApp,
  caller: Caller,
  name: string,
  overrides: Record<string, unknown> = {},
): Promise<CreatedConnector> {
  const response = await t.rest('POST', '/api/v1/forge/connectors', {
    caller,
    body: { template: template(name, overrides) },
  });
  expect(response.status).toBe(201);
  return response.body as CreatedConnector;
}

/**
 * Rows a tenant has in the three tables a connector write touches. Audit rows count when their action
 * starts with `connector.`, or whatever their action with `anyAudit`.
 */
export async function storedRows(t: TestApp, tenantId: string, { anyAudit = false } = {}) {
  const prisma = t.db.prisma;
  const [connectors, versions, audits] = await Promise.all([
    prisma.connector.count({ where: { tenantId } }),
    prisma.connectorVersion.count({ where: { connector: { tenantId } } }),
    prisma.auditEntry.count({
      where: anyAudit ? { tenantId } : { tenantId, action: { startsWith: 'connector.' } },
    }),
  ]);
  return { connectors, versions, audits };
}

/** Posts a body as a chairman of a fresh tenant, expects 422, checks nothing was stored, answers the detail. */
export async function refused(
  t: TestApp,
  body: unknown,
): Promise<{ type: string; loc: (string | number)[]; msg: string; input: unknown }[]> {
  const caller: Caller = await t.caller(['chairman']);
  const response = await t.rest('POST', '/api/v1/forge/connectors', { caller, body });
  expect(response.status).toBe(422);
  expect(await storedRows(t, caller.tenantId, { anyAudit: true })).toEqual({
    connectors: 0,
    versions: 0,
    audits: 0,
  });
  return response.body.detail;
}

/** Posts `withTemplate(overrides)` as a chairman of a fresh tenant, expects 201, answers the Connector. */
export async function accepted(t: TestApp, overrides: Record<string, unknown>) {
  const caller = await t.caller(['chairman']);
  const response = await t.rest('POST', '/api/v1/forge/connectors', {
    caller,
    body: withTemplate(overrides),
  });
  expect(response.status).toBe(201);
  return response.body;
}

/** A fresh tenant's chairman and operator, and a connector the chairman created from `template` (expects 201). */
export async function operatedConnector(t: TestApp, template: Record<string, unknown>) {
  const chairman = await t.caller(['chairman']);
  const operator = await t.caller(['operator'], { tenantId: chairman.tenantId });
  const created = await t.rest('POST', '/api/v1/forge/connectors', { caller: chairman, body: { template } });
  expect(created.status).toBe(201);
  return { chairman, operator, id: created.body.id as string };
}
