import { randomBytes, randomUUID } from 'node:crypto';
import { ToolListChangedNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import { decodeJwt } from 'jose';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { connectorToolName } from '../../mcp/connector-tools.js';
import { signToken } from '../../src/auth/tokens.js';
import { callerKey } from '../../src/rate-limit.js';
import type { RunningServer } from '../../src/server.js';
import { type Caller, createTestApp, TEST_SECRET, type TestApp } from '../support/app.js';
import { createTestDatabase, databaseKind, type TestDatabase } from '../support/database.js';
import { listen } from '../support/ws.js';
import { callTool, connectMcp, openToolListStream, type RawToolListStream } from './mcp-support.js';

let t: TestApp;
let server: RunningServer;
beforeAll(async () => {
  t = await createTestApp({
    env: {
      MAX_STREAMS_PER_CALLER: '2',
      RETRY_AFTER_SECONDS: '3',
      CONNECTOR_SECRETS_KEY: `k1:${randomBytes(32).toString('base64')}`,
    },
  });
  server = await listen(t);
});
afterAll(async () => {
  await server?.close();
  await t?.close();
});
afterEach(() => {
  vi.restoreAllMocks();
});

function template(name: string, paths = ['/contacts'], authType = 'none') {
  return {
    name,
    base_url: 'https://crm.example.com/v1',
    auth_type: authType,
    endpoints: paths.map((path) => ({ method: 'GET', path })),
  };
}

async function createConnector(
  app: TestApp,
  chairman: Caller,
  name: string,
  body = { template: template(name) },
): Promise<string> {
  const created = await app.rest('POST', '/api/v1/forge/connectors', {
    caller: chairman,
    body,
  });
  expect(created.status).toBe(201);
  return created.body.id as string;
}

async function tenant() {
  const chairman = await t.caller(['chairman']);
  const agent = await t.caller(['agent'], { tenantId: chairman.tenantId });
  return { chairman, agent };
}

/** The SDK client with the list_changed notifications it received, each awaitable. */
async function notifiedClient(caller: Caller) {
  const client = await connectMcp(server, caller);
  let count = 0;
  let waiters: (() => void)[] = [];
  client.setNotificationHandler(ToolListChangedNotificationSchema, () => {
    count += 1;
    for (const waiter of waiters) waiter();
    waiters = [];
  });
  /** Resolves once more than `seen` notifications arrived (rejects after `timeoutMs`). */
  const after = (seen: number, timeoutMs = 5000) =>
    new Promise<void>((resolve, reject) => {
      if (count > seen) return resolve();
      const timer = setTimeout(
        () => reject(new Error(`no tools/list_changed within ${timeoutMs} ms`)),
        timeoutMs,
      );
      waiters.push(() => {
        clearTimeout(timer);
        resolve();
      });
    });
  return { client, count: () => count, after };
}

type Notified = Awaited<ReturnType<typeof notifiedClient>>;

/**
 * Publishes CONNECTOR_CHANGED probes for the caller's tenant until the client's GET stream carries a
 * notification: the SDK client opens the stream in the background, after `initialize`.
 */
async function untilStreaming(notified: Notified, tenantId: string) {
  for (let round = 0; notified.count() === 0; round += 1) {
    if (round === 50) throw new Error('the GET stream never carried a notification');
    const eventId = randomUUID();
    await t.app.services.bus.publish({
      eventId,
      type: 'CONNECTOR_CHANGED',
      tenantId,
      payload: { event_id: eventId, tenant_id: tenantId, connector_id: randomUUID(), changes: [] },
    });
    await notified.after(0, 100).catch(() => undefined);
  }
}

/** The names of the endpoints a search finds for the client (the tool list itself does not change). */
const searched = async (client: Notified['client']) =>
  (await callTool(client, 'search_connector_endpoints', { limit: 25 })).structuredContent.endpoints.map(
    (endpoint: { name: string }) => endpoint.name,
  ) as string[];

/** Waits for notifications until a search after one satisfies `shows`; returns the names it found. */
async function listedAfterNotification(notified: Notified, shows: (names: string[]) => boolean) {
  for (;;) {
    await notified.after(notified.count());
    const names = await searched(notified.client);
    if (shows(names)) return names;
  }
}

const notification = { jsonrpc: '2.0', method: 'notifications/tools/list_changed' };

describe('GET /mcp: the stream of tool list changes', () => {
  it('declares tools.listChanged', async () => {
    const { agent } = await tenant();
    const client = await connectMcp(server, agent);
    expect(client.getServerCapabilities()?.tools).toEqual({ listChanged: true });
    await client.close();
  });

  it('notifies the SDK client when a connector is created and when it is edited; a search then finds the change', async () => {
    const { chairman, agent } = await tenant();
    const notified = await notifiedClient(agent);
    await untilStreaming(notified, agent.tenantId);

    const connectorId = await createConnector(t, chairman, 'CRM');
    const crm = (name: string, path: string) => connectorToolName({ id: connectorId, name }, 'GET', path);
    const afterCreate = await listedAfterNotification(notified, (names) =>
      names.includes(crm('CRM', '/contacts')),
    );
    expect(afterCreate).toContain(crm('CRM', '/contacts'));

    const updated = await t.rest('PUT', `/api/v1/forge/connectors/${connectorId}`, {
      caller: chairman,
      body: { template: template('Sales CRM', ['/contacts', '/deals']) },
    });
    expect(updated.status).toBe(200);
    const afterEdit = await listedAfterNotification(notified, (names) =>
      names.includes(crm('Sales CRM', '/deals')),
    );
    expect(afterEdit).toEqual(
      expect.arrayContaining([crm('Sales CRM', '/contacts'), crm('Sales CRM', '/deals')]),
    );
    expect(afterEdit).not.toContain(crm('CRM', '/contacts'));
    await notified.client.close();
  });

  it('records CONNECTOR_CHANGED with ids and field names only; none for a credential, a policy or an edit that changes nothing', async () => {
    const { chairman } = await tenant();
    const vault = template('Vault', ['/contacts'], 'bearer');
    const connectorId = await createConnector(t, chairman, 'Vault', { template: vault });
    const credential = await t.rest('PUT', `/api/v1/forge/connectors/${connectorId}/credential`, {
      caller: chairman,
      body: { bearer: { token: 'sk_live_do_not_leak' } },
    });
    expect(credential.status).toBe(200);
    const policy = await t.rest('PUT', `/api/v1/forge/connectors/${connectorId}/approval-policy`, {
      caller: chairman,
      body: { rules: [{ methods: ['GET'] }] },
    });
    expect(policy.status).toBe(200);
    // The same template again (its endpoint's keys in another order): a new version, nothing listed changed.
    const same = await t.rest('PUT', `/api/v1/forge/connectors/${connectorId}`, {
      caller: chairman,
      body: {
        template: { ...vault, endpoints: [{ path: '/contacts', method: 'GET' }] },
      },
    });
    expect(same.status).toBe(200);
    const edited = await t.rest('PUT', `/api/v1/forge/connectors/${connectorId}`, {
      caller: chairman,
      body: {
        template: { ...vault, endpoints: [{ method: 'GET', path: '/secrets' }], description: 'Secrets.' },
      },
    });
    expect(edited.status).toBe(200);

    const events = await t.db.prisma.outboxEvent.findMany({
      where: { tenantId: chairman.tenantId, type: 'CONNECTOR_CHANGED' },
      orderBy: { seq: 'asc' },
    });
    expect(events.map((event) => event.payload)).toEqual([
      {
        event_id: events[0]?.id,
        type: 'CONNECTOR_CHANGED',
        tenant_id: chairman.tenantId,
        connector_id: connectorId,
        version: 1,
        status: 'active',
        changes: ['created'],
        changed_at: expect.any(String),
      },
      {
        event_id: events[1]?.id,
        type: 'CONNECTOR_CHANGED',
        tenant_id: chairman.tenantId,
        connector_id: connectorId,
        version: 4,
        status: 'active',
        changes: ['description', 'endpoints'],
        changed_at: expect.any(String),
      },
    ]);
    expect(JSON.stringify(events.map((event) => event.payload))).not.toContain('sk_live_do_not_leak');

    await t.app.services.relay.kick();
    const read = await t.graphql(
      `query { recentEvents(types: [CONNECTOR_CHANGED]) {
        event { ... on ConnectorChangedEvent { connectorId version status changes } }
      } }`,
      {},
      chairman,
    );
    expect(read.data).toEqual({
      recentEvents: [
        { event: { connectorId, version: 4, status: 'active', changes: ['description', 'endpoints'] } },
        { event: { connectorId, version: 1, status: 'active', changes: ['created'] } },
      ],
    });
  });

  it('carries only the caller’s tenant’s changes', async () => {
    const one = await tenant();
    const other = await tenant();
    const watching = await openToolListStream(server, one.agent);
    const stranger = await openToolListStream(server, other.agent);
    expect(stranger.status).toBe(200);

    await createConnector(t, one.chairman, 'Mine');
    expect(await watching.next()).toEqual(notification);
    // The stranger's stream has had nothing; its own tenant's change then arrives alone.
    expect(stranger.received()).toEqual([]);
    await createConnector(t, other.chairman, 'Theirs');
    expect(await stranger.next()).toEqual(notification);
    expect(stranger.received()).toEqual([notification]);
    await Promise.all([watching.close(), stranger.close()]);
  });

  it('refuses a request without a token or with a bad one: 401 with the Bearer challenge, no stream', async () => {
    const anonymous = await openToolListStream(server, null);
    expect(anonymous.status).toBe(401);
    expect(anonymous.headers.get('www-authenticate')).toBe('Bearer');
    expect(await anonymous.json()).toEqual({
      jsonrpc: '2.0',
      id: null,
      error: { code: -32000, message: 'Not authenticated' },
    });
    const forged = await openToolListStream(server, { token: 'not-a-token' });
    expect(forged.status).toBe(401);
    expect(forged.headers.get('www-authenticate')).toBe('Bearer error="invalid_token"');
    expect((await forged.json()).error.code).toBe(-32000);
  });

  it('refuses a member and a chairman: 403, no stream and no slot taken', async () => {
    for (const roles of [['member'], ['chairman']] as const) {
      const caller = await t.caller([...roles]);
      const refused = await openToolListStream(server, caller);
      expect(refused.status).toBe(403);
      expect(await refused.json()).toEqual({
        jsonrpc: '2.0',
        id: null,
        error: {
          code: -32000,
          message: 'Not allowed for your role: the MCP endpoint serves agents and operators',
        },
      });
      expect(t.app.services.streams.held(callerKey(caller))).toBe(0);
    }
  });

  it('refuses a request that does not accept text/event-stream: 406 as a JSON-RPC error, no slot taken', async () => {
    const { agent } = await tenant();
    const refused = await openToolListStream(server, agent, { accept: 'application/json' });
    expect(refused.status).toBe(406);
    expect(await refused.json()).toEqual({
      jsonrpc: '2.0',
      id: null,
      error: { code: -32000, message: 'Not Acceptable: Client must accept text/event-stream' },
    });
    expect(t.app.services.streams.held(callerKey(agent))).toBe(0);
  });

  it('takes one of the caller’s stream slots: beyond them 429 with Retry-After, and nothing opened', async () => {
    const { agent } = await tenant();
    const open = [await openToolListStream(server, agent), await openToolListStream(server, agent)];
    expect(open.map((stream) => stream.status)).toEqual([200, 200]);
    const listen = vi.spyOn(t.app.services.bus, 'listen');

    const refused = await openToolListStream(server, agent);
    expect(refused.status).toBe(429);
    expect(refused.headers.get('retry-after')).toBe('3');
    expect(await refused.json()).toEqual({
      jsonrpc: '2.0',
      id: null,
      error: {
        code: -32000,
        message:
          'Too many open streams: at most 2 WebSockets, server-sent event subscriptions and MCP streams per caller',
      },
    });
    expect(listen).not.toHaveBeenCalled();
    await Promise.all(open.map((stream) => stream.close()));
  });

  it('gives back its slot and its bus listener when the client goes away', async () => {
    const { agent } = await tenant();
    const stops = vi.fn();
    const listenToBus = t.app.services.bus.listen.bind(t.app.services.bus);
    vi.spyOn(t.app.services.bus, 'listen').mockImplementation((...args) => {
      const stop = listenToBus(...args);
      return () => {
        stops();
        stop();
      };
    });
    for (let round = 0; round < 3; round += 1) {
      const streams = [await openToolListStream(server, agent), await openToolListStream(server, agent)];
      expect(streams.map((stream) => stream.status)).toEqual([200, 200]);
      await Promise.all(streams.map((stream) => stream.close()));
      // The server counts a stream out once it has seen it close.
      while (t.app.services.streams.held(callerKey(agent)) > 0) {
        await new Promise((resolve) => setImmediate(resolve));
      }
    }
    expect(stops).toHaveBeenCalledTimes(6);
  });

  it('ends the stream when the caller’s token expires, giving its slot back', async () => {
    const tenantId = randomUUID();
    const token = await signToken(TEST_SECRET, { tenantId, sub: 'agent-1', roles: ['agent'], ttl: '2s' });
    const expiresAt = (decodeJwt(token).exp as number) * 1000;
    const stream: RawToolListStream = await openToolListStream(server, { token });
    expect(stream.status).toBe(200);

    await stream.ended(10_000);
    expect(Date.now()).toBeGreaterThanOrEqual(expiresAt);
    expect(t.app.services.streams.held(callerKey({ tenantId, sub: 'agent-1' }))).toBe(0);
    const again = await openToolListStream(server, { token });
    expect(again.status).toBe(401);
  });

  it('sends nothing once the token has expired, even before its timer fires: the stream ends instead', async () => {
    const { agent } = await tenant();
    const stream = await openToolListStream(server, agent);
    expect(stream.status).toBe(200);

    const now = Date.now();
    vi.spyOn(Date, 'now').mockReturnValue(now + 2 * 60 * 60 * 1000);
    const eventId = randomUUID();
    await t.app.services.bus.publish({
      eventId,
      type: 'CONNECTOR_CHANGED',
      tenantId: agent.tenantId,
      payload: { event_id: eventId, tenant_id: agent.tenantId, connector_id: randomUUID(), changes: [] },
    });

    await stream.ended();
    expect(stream.received()).toEqual([]);
    expect(t.app.services.streams.held(callerKey(agent))).toBe(0);
  });
});

describe.skipIf(databaseKind === 'pglite')('two instances on one database and one Redis', () => {
  let database: TestDatabase;
  let a: TestApp;
  let b: TestApp;
  let serverB: RunningServer;
  beforeAll(async () => {
    database = await createTestDatabase();
    a = await createTestApp({ database });
    b = await createTestApp({ database });
    serverB = await listen(b);
  });
  afterAll(async () => {
    await serverB?.close();
    await a?.close();
    await b?.close();
    await database?.drop();
  });

  it('notifies a stream on instance B of a change made through instance A', async () => {
    const chairman = await a.caller(['chairman']);
    const agent = await a.caller(['agent'], { tenantId: chairman.tenantId });
    const stream = await openToolListStream(serverB, agent);
    expect(stream.status).toBe(200);

    const connectorId = await createConnector(a, chairman, 'Shared CRM');
    expect(await stream.next()).toEqual(notification);
    const client = await connectMcp(serverB, agent);
    expect(await searched(client)).toContain(
      connectorToolName({ id: connectorId, name: 'Shared CRM' }, 'GET', '/contacts'),
    );
    await client.close();
    await stream.close();
  });
});
