import { request as httpRequest } from 'node:http';
import { connect, type Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MAX_BODY_BYTES, MAX_UPLOAD_BYTES } from '../../src/http/body.js';
import type { RunningServer } from '../../src/server.js';
import { type Caller, createTestApp, type TestApp } from '../support/app.js';
import { databaseKind } from '../support/database.js';
import { eventually } from '../support/eventually.js';
import { listen } from '../support/ws.js';

const MiB = 1024 * 1024;
const CHUNK = 64 * 1024;
const LINGER_MS = 1000;
const LINGER_BYTES = 2 * MiB;
// The whole request may take a minute: whatever closes a connection sooner is the lingering close.
const env = {
  HTTP_LINGER_MS: String(LINGER_MS),
  HTTP_LINGER_BYTES: String(LINGER_BYTES),
  HTTP_BODY_TIMEOUT_MS: '60000',
};

/** 70 MiB of broken JSON: were it parsed, the answer would be 400 or 422, not 413. */
const body = Buffer.alloc(70 * MiB, 0x7b);

/** `body` as a stream: sent chunked, without Content-Length. */
function streamed(): ReadableStream<Uint8Array> {
  let sent = 0;
  return new ReadableStream<Uint8Array>({
    pull(controller) {
      if (sent >= body.byteLength) return controller.close();
      controller.enqueue(body.subarray(sent, sent + CHUNK));
      sent += CHUNK;
    },
  });
}

const tooLarge = (limit: number) => ({ message: `Request body exceeds ${limit} bytes` });
const notAuthenticated = { message: 'Not authenticated' };
type Answer = { message: string };

const graphqlError = ({ message }: Answer, code: string) => ({ errors: [{ message, extensions: { code } }] });

/** Each surface's body for a refusal, as its clients read it, and its limit for a verified caller. */
const surfaces = [
  {
    name: '/graphql',
    path: '/graphql',
    contentType: 'application/json',
    limit: MAX_BODY_BYTES,
    shape: graphqlError,
  },
  {
    name: '/graphql multipart',
    path: '/graphql',
    contentType: 'multipart/form-data; boundary=boardroom',
    limit: MAX_UPLOAD_BYTES,
    shape: graphqlError,
  },
  {
    name: 'a REST route',
    path: '/api/v1/hiring/p-1/onboard/c-1',
    contentType: 'application/json',
    limit: MAX_BODY_BYTES,
    shape: ({ message }: Answer) => ({ detail: message }),
  },
  {
    name: '/mcp',
    path: '/mcp',
    contentType: 'application/json',
    limit: MAX_BODY_BYTES,
    shape: ({ message }: Answer) => ({ jsonrpc: '2.0', id: null, error: { code: -32000, message } }),
  },
];

let t: TestApp;
let server: RunningServer;
let operator: Caller;

/** What the server read from each connection, by the client's port, once the connection closed. */
const closed = new Map<number, { bytesRead: number; at: number }>();

beforeAll(async () => {
  t = await createTestApp({ env });
  server = await listen(t);
  server.server.on('connection', (socket: Socket) => {
    const port = socket.remotePort as number;
    socket.once('close', () => closed.set(port, { bytesRead: socket.bytesRead, at: Date.now() }));
  });
  // The REST route and /mcp admit an operator: a body within the limit would be read.
  operator = await t.caller(['operator']);
});
afterAll(async () => {
  await server?.close();
  await t?.close();
});

const headersOf = (contentType: string, token: string | undefined) => ({
  'content-type': contentType,
  accept: 'application/json, text/event-stream',
  ...(token ? { authorization: `Bearer ${token}` } : {}),
});

/** Node's fetch (undici): the answer's status, `Connection` header and body. */
async function viaFetch(path: string, headers: Record<string, string>, chunked: boolean) {
  const response = await fetch(`${server.url}${path}`, {
    method: 'POST',
    headers,
    body: chunked ? streamed() : body,
    duplex: 'half',
  } as RequestInit);
  return { status: response.status, body: await response.json() };
}

/**
 * node:http's client, which goes on sending the body after the answer came: the answer's status, headers and
 * body once it has all arrived (what the request's write meets afterwards is not the answer's business).
 */
function viaNodeHttp(path: string, headers: Record<string, string>, chunked: boolean) {
  const { hostname, port } = new URL(server.url);
  return new Promise<{ status: number; connection: string | undefined; body: unknown }>((resolve, reject) => {
    const request = httpRequest(
      {
        host: hostname,
        port,
        path,
        method: 'POST',
        headers: { ...headers, ...(chunked ? {} : { 'content-length': body.byteLength }) },
      },
      (response) => {
        let text = '';
        response.setEncoding('utf8');
        response.on('data', (chunk: string) => {
          text += chunk;
        });
        response.on('end', () =>
          resolve({
            status: response.statusCode as number,
            connection: response.headers.connection,
            body: JSON.parse(text),
          }),
        );
        response.on('error', reject);
      },
    );
    // Before the answer, an error is the failure under test; after it, the write meets the close.
    request.on('error', reject);
    let at = 0;
    const pump = () => {
      while (at < body.byteLength) {
        const ok = request.write(body.subarray(at, at + CHUNK));
        at += CHUNK;
        if (!ok) return void request.once('drain', pump);
      }
      request.end();
    };
    if (chunked) pump();
    else request.end(body);
  });
}

describe(`an answer written while the body still arrives (${databaseKind})`, () => {
  for (const { name, path, contentType, limit, shape } of surfaces) {
    for (const token of ['no token', 'a token'] as const) {
      for (const chunked of [false, true]) {
        // Without a verified caller the limit is 1 MiB; a REST route, /mcp and a multipart request read no
        // body before the caller is authenticated: 401 at once, unless a declared length is already too large.
        const refusal =
          token === 'a token'
            ? { status: 413, body: shape(tooLarge(limit), 'PAYLOAD_TOO_LARGE') }
            : chunked && (path !== '/graphql' || contentType !== 'application/json')
              ? { status: 401, body: shape(notAuthenticated, 'UNAUTHENTICATED') }
              : { status: 413, body: shape(tooLarge(MAX_BODY_BYTES), 'PAYLOAD_TOO_LARGE') };
        const framing = chunked ? 'chunked' : 'with Content-Length';
        it(`reaches fetch and node:http: 70 MiB ${framing} on ${name} with ${token} → ${refusal.status}`, async () => {
          const headers = headersOf(contentType, token === 'a token' ? operator.token : undefined);
          expect(await viaFetch(path, headers, chunked)).toEqual(refusal);
          expect(await viaNodeHttp(path, headers, chunked)).toEqual({ ...refusal, connection: 'close' });
        });
      }
    }
  }
});

/**
 * A raw connection: what it received, whether it saw an error, and when it closed. It stays open for writing
 * when the server's side closes (a Node socket would otherwise end its own side too and stop sending).
 */
interface Raw {
  socket: Socket;
  /** The client's port, the key of what the server records. */
  port: number;
  received(): string;
  answered: Promise<number>;
  closed: Promise<{ error: string | undefined; at: number }>;
}

function openRaw(): Promise<Raw> {
  const { hostname, port } = new URL(server.url);
  return new Promise((resolve, reject) => {
    const socket = connect({ port: Number(port), host: hostname, allowHalfOpen: true });
    let text = '';
    let error: string | undefined;
    let answer: (at: number) => void = () => {};
    const answered = new Promise<number>((done) => {
      answer = done;
    });
    socket.setEncoding('latin1');
    socket.on('data', (chunk: string) => {
      text += chunk;
      if (text.includes('\r\n\r\n')) answer(Date.now());
    });
    socket.on('error', (cause: NodeJS.ErrnoException) => {
      error ??= cause.code;
    });
    const closed = new Promise<{ error: string | undefined; at: number }>((done) =>
      socket.once('close', () => done({ error, at: Date.now() })),
    );
    socket.once('connect', () =>
      resolve({ socket, port: socket.localPort as number, received: () => text, answered, closed }),
    );
    socket.once('error', reject);
  });
}

const head = (path: string, headers: Record<string, string | number>) =>
  `POST ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\n${Object.entries(headers)
    .map(([name, value]) => `${name}: ${value}\r\n`)
    .join('')}\r\n`;

/** Writes `bytes` of body as fast as the connection takes them, until done or the connection closes. */
function blast(raw: Raw, bytes: number): void {
  let written = 0;
  const chunk = Buffer.alloc(CHUNK, 0x7b);
  const pump = () => {
    while (written < bytes && !raw.socket.destroyed) {
      written += CHUNK;
      if (!raw.socket.write(chunk)) return void raw.socket.once('drain', pump);
    }
  };
  pump();
}

/** What the server read from `raw`'s connection, once it closed. */
const readByServer = (raw: Raw) =>
  eventually(() => {
    const record = closed.get(raw.port);
    expect(record).toBeDefined();
    return record as { bytesRead: number; at: number };
  });

const statusOf = (text: string) => Number(/^HTTP\/1\.1 (\d{3})/.exec(text)?.[1]);

describe(`the lingering close is bounded (${databaseKind})`, () => {
  it('reads at most 1 MiB of a caller without a token once it answered, whatever the client still sends', async () => {
    const raw = await openRaw();
    raw.socket.write(
      head('/graphql', { 'content-type': 'application/json', 'content-length': body.byteLength }),
    );
    blast(raw, body.byteLength);

    await raw.answered;
    expect(statusOf(raw.received())).toBe(413);
    expect(raw.received()).toMatch(/\r\nconnection: close\r\n/i);
    const { bytesRead } = await readByServer(raw);
    // Headers, what arrived before the answer (a read or two) and what was dropped after it.
    expect(bytesRead).toBeLessThan(MAX_BODY_BYTES + 4 * CHUNK);
  });

  it(`reads at most HTTP_LINGER_BYTES of an authenticated caller's refused body`, async () => {
    const raw = await openRaw();
    // Chat admits 72 MiB from a verified caller; 80 MiB is refused before any of it is read.
    raw.socket.write(
      head('/api/v1/agents/ceo/chat', {
        'content-type': 'application/json',
        authorization: `Bearer ${operator.token}`,
        'content-length': 80 * MiB,
      }),
    );
    blast(raw, 80 * MiB);

    await raw.answered;
    expect(statusOf(raw.received())).toBe(413);
    const { bytesRead } = await readByServer(raw);
    expect(bytesRead).toBeGreaterThan(MAX_BODY_BYTES + 4 * CHUNK);
    expect(bytesRead).toBeLessThan(LINGER_BYTES + 4 * CHUNK);
  });

  it('closes on a client that keeps trickling its body within HTTP_LINGER_MS of the answer', async () => {
    const raw = await openRaw();
    raw.socket.write(
      head('/graphql', {
        'content-type': 'application/json',
        authorization: `Bearer ${operator.token}`,
        'content-length': 2 * MiB,
      }),
    );
    const answeredAt = await raw.answered;
    expect(statusOf(raw.received())).toBe(413);
    const trickle = setInterval(() => {
      if (!raw.socket.destroyed) raw.socket.write('{');
    }, 50);
    const { at } = await raw.closed.finally(() => clearInterval(trickle));
    // The deadline is the criterion: HTTP_LINGER_MS after the answer, far before the body timeout (60 s).
    expect(at - answeredAt).toBeLessThan(LINGER_MS + 5000);
  });

  // Each way an answer comes before the body: refused by its declared length before any of it is read, or
  // by a reader that gives the body up at the limit (GraphQL's counting parser, REST's and MCP's withBody).
  for (const [path, chunked, caller] of [
    ['/mcp', false, 'no token'],
    ['/graphql', true, 'no token'],
    ['/api/v1/hiring/p-1/onboard/c-1', true, 'a token'],
    ['/mcp', true, 'a token'],
  ] as const) {
    it(`reads what a client still sends after the answer and closes with a FIN once it stops: ${path} ${chunked ? 'chunked' : 'with Content-Length'}, ${caller}`, async () => {
      const raw = await openRaw();
      const frame = (bytes: Buffer) =>
        chunked
          ? Buffer.concat([Buffer.from(`${bytes.byteLength.toString(16)}\r\n`), bytes, Buffer.from('\r\n')])
          : bytes;
      raw.socket.write(
        head(path, {
          'content-type': 'application/json',
          accept: 'application/json, text/event-stream',
          ...(caller === 'a token' ? { authorization: `Bearer ${operator.token}` } : {}),
          ...(chunked ? { 'transfer-encoding': 'chunked' } : { 'content-length': 2 * MiB }),
        }),
      );
      // Past the limit when chunked: the answer comes once the reader gave up.
      if (chunked) raw.socket.write(frame(Buffer.alloc(MiB + CHUNK, 0x7b)));
      await raw.answered;
      expect(statusOf(raw.received())).toBe(413);
      // Half a MiB more after the answer (what a client had in flight), then the client stops sending.
      raw.socket.write(frame(Buffer.alloc(MiB / 2, 0x7b)));
      raw.socket.end(chunked ? '0\r\n\r\n' : '');

      expect((await raw.closed).error).toBeUndefined();
      // One answer, the 413, and nothing after it.
      expect(raw.received().match(/HTTP\/1\.1 \d{3}/g)).toEqual(['HTTP/1.1 413']);
      expect(raw.received()).toMatch(/Request body exceeds 1048576 bytes/);
    });
  }
});

describe(`unauthenticated requests being closed count against their address (${databaseKind})`, () => {
  let capped: TestApp;
  let cappedServer: RunningServer;
  beforeAll(async () => {
    // Connections held long enough that only the clients' own close ends them.
    capped = await createTestApp({
      env: { ...env, HTTP_LINGER_MS: '60000', HTTP_MAX_ANONYMOUS_PER_ADDRESS: '2' },
    });
    cappedServer = await listen(capped);
  });
  afterAll(async () => {
    await cappedServer?.close();
    await capped?.close();
  });

  const anonymous = () =>
    fetch(`${cappedServer.url}/graphql`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ query: '{ __typename }' }),
    });

  it('holds the place of a refused request until its connection is closed, then gives it back', async () => {
    const { hostname, port } = new URL(cappedServer.url);
    const lingering = await Promise.all(
      [0, 1].map(
        () =>
          new Promise<{ socket: Socket; closed: Promise<void> }>((resolve) => {
            // Open while the server's side is closed (a client still sending): only its own end closes it.
            const socket = connect({ port: Number(port), host: hostname, allowHalfOpen: true });
            const closedOnce = new Promise<void>((done) => socket.once('close', () => done()));
            socket.on('error', () => {});
            socket.setEncoding('latin1');
            let text = '';
            socket.on('data', (chunk: string) => {
              text += chunk;
              if (text.includes('\r\n\r\n')) resolve({ socket, closed: closedOnce });
            });
            socket.write(head('/graphql', { 'content-type': 'application/json', 'content-length': 2 * MiB }));
          }),
      ),
    );

    // Both answered 413 and still held: a third request from the address is over the cap.
    const refused = await anonymous();
    expect(refused.status).toBe(429);
    await refused.arrayBuffer();

    // The clients stop sending: the server closes both connections and gives their places back.
    for (const { socket } of lingering) socket.end();
    await Promise.all(lingering.map(({ closed: done }) => done));
    const served = await eventually(async () => {
      const response = await anonymous();
      await response.arrayBuffer();
      expect(response.status).toBe(200);
      return response.status;
    });
    expect(served).toBe(200);
  });
});
