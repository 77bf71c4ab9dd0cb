import { connect, type Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunningServer } from '../../src/server.js';
import { type Caller, createTestApp, type TestApp } from '../support/app.js';
import { databaseKind } from '../support/database.js';
import { listen } from '../support/ws.js';

// Short timeouts so that the cut can be awaited; a budget of 5 requests in flight (pool 2 + queue 3) that
// 200 slow sockets would hold many times over; at most 8 unauthenticated requests per address.
const env = {
  HTTP_HEADERS_TIMEOUT_MS: '1000',
  HTTP_BODY_TIMEOUT_MS: '2000',
  HTTP_MAX_ANONYMOUS_PER_ADDRESS: '8',
  DATABASE_POOL_SIZE: '2',
  DATABASE_QUEUE_SIZE: '3',
};
const ANONYMOUS_CAP = 8;
const SLOW_SOCKETS = 200;

/** A raw client connection: what it received, and a promise of everything received once it closed. */
interface RawClient {
  socket: Socket;
  received(): string;
  closed: Promise<string>;
}

function openRaw(url: string): Promise<RawClient> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), hostname);
    let text = '';
    socket.setEncoding('latin1');
    socket.on('data', (chunk: string) => {
      text += chunk;
    });
    socket.on('error', () => {});
    const closed = new Promise<string>((done) => socket.once('close', () => done(text)));
    socket.once('connect', () => resolve({ socket, received: () => text, closed }));
    socket.once('error', reject);
  });
}

function write(client: RawClient, text: string): Promise<void> {
  return new Promise((resolve, reject) =>
    client.socket.write(text, (error) => (error ? reject(error) : resolve())),
  );
}

/** Writes one byte of `text` at a time, every `intervalMs`, until the text is sent or the socket closes. */
function trickle(client: RawClient, text: string, intervalMs = 50): void {
  let index = 0;
  const timer = setInterval(() => {
    if (index >= text.length || client.socket.destroyed) clearInterval(timer);
    else client.socket.write(text[index++] as string);
  }, intervalMs);
  client.socket.once('close', () => clearInterval(timer));
}

const head = (method: string, path: string, headers: Record<string, string | number>) =>
  `${method} ${path} HTTP/1.1\r\nHost: boardroom\r\n${Object.entries(headers)
    .map(([name, value]) => `${name}: ${value}\r\n`)
    .join('')}\r\n`;

const statusOf = (response: string) => Number(/^HTTP\/1\.1 (\d{3})/.exec(response)?.[1]);
const bodyOf = (response: string) => JSON.parse(response.slice(response.indexOf('\r\n\r\n') + 4));

let t: TestApp;
let server: RunningServer;
const tenants: Caller[] = [];

/** Everything a member's POST to `path` receives when its 1000-byte JSON body arrives a byte at a time. */
async function trickledBody(path: string): Promise<string> {
  const client = await openRaw(server.url);
  await write(
    client,
    head('POST', path, {
      'content-type': 'application/json',
      authorization: `Bearer ${tenants[0]?.token}`,
      'content-length': 1000,
    }),
  );
  trickle(client, 'x'.repeat(1000));
  return client.closed;
}

beforeAll(async () => {
  t = await createTestApp({ env });
  server = await listen(t);
  for (let index = 0; index < 10; index += 1) {
    const caller = await t.caller(['member']);
    // Each tenant exists before the slow sockets arrive.
    expect((await t.graphql('{ me { sub } }', {}, caller)).status).toBe(200);
    tenants.push(caller);
  }
});
afterAll(async () => {
  await server.close();
  await t.close();
});

/** Each tenant's query and REST call, one after another (within the budget), over real connections. */
async function everyTenantCalls(): Promise<number[]> {
  const statuses: number[] = [];
  for (const caller of tenants) {
    const query = await fetch(`${server.url}/graphql`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${caller.token}` },
      body: JSON.stringify({ query: '{ agentVitals(role: "cfo") { tasksCompleted } }' }),
    });
    await query.arrayBuffer();
    const rest = await fetch(`${server.url}/api/v1/agents/cfo/vitals`, {
      headers: { authorization: `Bearer ${caller.token}` },
    });
    await rest.arrayBuffer();
    statuses.push(query.status, rest.status);
  }
  return statuses;
}

describe(`slow clients (${databaseKind})`, () => {
  it(`serves every tenant while ${SLOW_SOCKETS} anonymous sockets send a body three bytes at a time, then cuts them`, async () => {
    const slow = await Promise.all(Array.from({ length: SLOW_SOCKETS }, () => openRaw(server.url)));
    // /graphql reads the body of a request without a token (REST answers it 401 before reading).
    await Promise.all(
      slow.map((client) =>
        write(
          client,
          `${head('POST', '/graphql', { 'content-type': 'application/json', 'content-length': 1000 })}{"q`,
        ),
      ),
    );

    expect(await everyTenantCalls()).toEqual(tenants.flatMap(() => [200, 200]));

    const answers = await Promise.all(slow.map((client) => client.closed));
    const statuses = answers.map(statusOf);
    // Beyond the cap of the address: refused at once; within it: held until the body timeout cut them.
    expect(statuses.filter((status) => status === 429)).toHaveLength(SLOW_SOCKETS - ANONYMOUS_CAP);
    expect(statuses.filter((status) => status === 408)).toHaveLength(ANONYMOUS_CAP);
  });

  it('serves every tenant while more authenticated callers than the budget send their bodies slowly', async () => {
    const slow = await Promise.all(Array.from({ length: 20 }, () => openRaw(server.url)));
    await Promise.all(
      slow.map((client, index) =>
        write(
          client,
          `${head('POST', index % 2 ? '/graphql' : '/api/v1/agents/ceo/chat', {
            'content-type': 'application/json',
            authorization: `Bearer ${tenants[index % tenants.length]?.token}`,
            'content-length': 1000,
          })}{"m`,
        ),
      ),
    );

    expect(await everyTenantCalls()).toEqual(tenants.flatMap(() => [200, 200]));

    const answers = await Promise.all(slow.map((client) => client.closed));
    expect(answers.map(statusOf)).toEqual(slow.map(() => 408));
  });

  it('cuts a client that sends its headers a byte at a time with 408', async () => {
    const client = await openRaw(server.url);
    trickle(client, head('GET', '/healthz', { 'x-padding': 'p'.repeat(500) }));

    const answer = await client.closed;
    expect(statusOf(answer)).toBe(408);
  });

  it('cuts a caller whose body keeps arriving a byte at a time with 408 in the GraphQL error shape', async () => {
    const answer = await trickledBody('/graphql');
    expect(statusOf(answer)).toBe(408);
    expect(bodyOf(answer)).toEqual({
      errors: [
        {
          message: 'Request timeout: the request did not arrive within 2000 ms',
          extensions: { code: 'REQUEST_TIMEOUT' },
        },
      ],
    });
  });

  it('cuts a slow REST body with 408 {"detail"}', async () => {
    const answer = await trickledBody('/api/v1/agents/ceo/chat');
    expect(statusOf(answer)).toBe(408);
    expect(bodyOf(answer)).toEqual({
      detail: 'Request timeout: the request did not arrive within 2000 ms',
    });
  });

  it('cuts the second request of a kept-alive connection when it arrives slowly', async () => {
    const client = await openRaw(server.url);
    await write(client, head('GET', '/healthz', {}));
    trickle(client, head('GET', '/healthz', { 'x-padding': 'p'.repeat(500) }));

    const answer = await client.closed;
    const statuses = [...answer.matchAll(/HTTP\/1\.1 (\d{3})/g)].map((match) => Number(match[1]));
    expect(statuses).toEqual([200, 408]);
  });
});

describe(`unauthenticated requests per address (${databaseKind})`, () => {
  it('refuses one more anonymous request than the cap with 429 in each shape, and serves it again once the others end', async () => {
    const held = await Promise.all(Array.from({ length: ANONYMOUS_CAP }, () => openRaw(server.url)));
    await Promise.all(
      held.map((client) =>
        write(
          client,
          `${head('POST', '/graphql', { 'content-type': 'application/json', 'content-length': 100 })}{`,
        ),
      ),
    );
    // The held requests are counted once a request beyond them is refused.
    let refused: Response;
    do {
      refused = await fetch(`${server.url}/graphql`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'application/graphql-response+json' },
        body: JSON.stringify({ query: '{ __typename }' }),
      });
    } while (refused.status !== 429);
    expect(refused.headers.get('retry-after')).toBe('2');
    expect(await refused.json()).toEqual({
      errors: [
        {
          message: `Too many unauthenticated requests from this address at once (at most ${ANONYMOUS_CAP}); retry in 2 s`,
          extensions: { code: 'RATE_LIMITED' },
        },
      ],
    });
    const rest = await fetch(`${server.url}/api/v1/agents/cfo/vitals`);
    expect(rest.status).toBe(429);
    expect(await rest.json()).toEqual({
      detail: `Too many unauthenticated requests from this address at once (at most ${ANONYMOUS_CAP}); retry in 2 s`,
    });
    const authenticated = await fetch(`${server.url}/api/v1/agents/cfo/vitals`, {
      headers: { authorization: `Bearer ${tenants[0]?.token}` },
    });
    expect(authenticated.status).toBe(200);
    expect((await fetch(`${server.url}/healthz`)).status).toBe(200);

    for (const client of held) client.socket.destroy();
    await Promise.all(held.map((client) => client.closed));
    let served: Response;
    do {
      served = await fetch(`${server.url}/api/v1/agents/cfo/vitals`);
    } while (served.status === 429);
    expect(served.status).toBe(401);
  });
});
