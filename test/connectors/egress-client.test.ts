import type { AddressInfo, Socket } from 'node:net';
import { createServer as createTcpServer, type Server as TcpServer } from 'node:net';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import {
  type EgressClient,
  EgressError,
  parseEgressAllowlist,
} from '../../src/domain/connectors/egress/index.js';
import { createEgressClient, type EgressClientOptions } from '../../src/infra/egress-client.js';
import { HOSTILE_BASE_URLS, REBINDING_NAMES } from '../fixtures/hostile-base-urls.js';
import {
  createTestCertificate,
  fixedLookup,
  startHttpsServer,
  type TestCertificate,
  type TestHttpsServer,
} from '../support/https-server.js';

const HOST = 'api.acme-payments.com';
const OTHER_HOST = 'files.acme-payments.com';

let certificate: TestCertificate;
let server: TestHttpsServer;
const clients: EgressClient[] = [];

beforeAll(async () => {
  certificate = await createTestCertificate();
  server = await startHttpsServer(certificate);
  server.route('/ok', (_request, _body, response) => {
    response.writeHead(200, { 'content-type': 'application/json' }).end('{"ok":true}');
  });
});
afterAll(() => server.close());
afterEach(async () => {
  await Promise.all(clients.splice(0).map((client) => client.close()));
  server.received.length = 0;
});

function allow(raw: string) {
  const parsed = parseEgressAllowlist(raw);
  if (!('allowlist' in parsed)) throw new Error(parsed.problems.join('; '));
  return parsed.allowlist;
}

function client(options: EgressClientOptions = {}): EgressClient {
  const created = createEgressClient({
    ca: certificate.cert,
    lookup: fixedLookup({ [HOST]: '127.0.0.1', [OTHER_HOST]: '127.0.0.1' }),
    allowlist: allow(`127.0.0.1:${server.port}`),
    ...options,
  });
  clients.push(created);
  return created;
}

const url = (path: string, host: string = HOST) => `https://${host}:${server.port}${path}`;
const get = (path: string, host: string = HOST) => ({ url: url(path, host), method: 'GET', headers: {} });

/** The EgressError a send rejects with (fails the test when it resolves or rejects with anything else). */
async function refusal(promise: Promise<unknown>): Promise<EgressError> {
  const error = await promise.then(
    () => null,
    (reason: unknown) => reason,
  );
  expect(error).toBeInstanceOf(EgressError);
  return error as EgressError;
}

describe('the egress client reaching a loopback server named by CONNECTOR_EGRESS_ALLOW', () => {
  it('answers the status, headers and body of an allowed address', async () => {
    const response = await client().send(get('/ok'));
    expect(response.status).toBe(200);
    expect(response.headers['content-type']).toBe('application/json');
    expect(response.body.toString()).toBe('{"ok":true}');
    expect(server.received).toHaveLength(1);
  });

  it('refuses the same call when the allowlist is empty, before anything reaches the server', async () => {
    const error = await refusal(client({ allowlist: { networks: [], hosts: [] } }).send(get('/ok')));
    expect(error.reason).toBe('address_refused');
    expect(error.message).toBe(
      `${HOST} resolved to 127.0.0.1, which is a loopback address; outbound connections to it on port ${server.port} are refused`,
    );
    expect(server.received).toHaveLength(0);
  });

  it('reaches the server when the allowlist names its host and port instead of its address', async () => {
    const response = await client({ allowlist: allow(`${HOST}:${server.port}`) }).send(get('/ok'));
    expect(response.status).toBe(200);
  });

  it('reaches the server through a CIDR entry with its port', async () => {
    const response = await client({ allowlist: allow(`127.0.0.0/8:${server.port}`) }).send(get('/ok'));
    expect(response.status).toBe(200);
  });

  it('refuses a host the allowlist does not name although another allowed name shares its address', async () => {
    const error = await refusal(
      client({ allowlist: allow(`${OTHER_HOST}:${server.port}`) }).send(get('/ok')),
    );
    expect(error.reason).toBe('address_refused');
  });

  it.each([
    ['its address', '127.0.0.1'],
    ['its host name', HOST],
    ['its network', '127.0.0.0/8'],
  ])(
    'refuses the server’s port when the allowlist names %s without a port (443 only)',
    async (_what, entry) => {
      const error = await refusal(client({ allowlist: allow(entry) }).send(get('/ok')));
      expect(error.reason).toBe('address_refused');
      expect(error.message).toContain(`on port ${server.port} are refused`);
      expect(server.received).toHaveLength(0);
    },
  );

  it('refuses the server’s port when the allowlist names its host with another port', async () => {
    const other = server.port === 8443 ? 8444 : 8443;
    const error = await refusal(
      client({ allowlist: allow(`${HOST}:${other},127.0.0.1:${other}`) }).send(get('/ok')),
    );
    expect(error.reason).toBe('address_refused');
    expect(server.received).toHaveLength(0);
  });

  it('refuses a name with one public and one loopback answer', async () => {
    const lookup = fixedLookup({ [HOST]: ['93.184.215.14', '127.0.0.1'] });
    const error = await refusal(client({ lookup, allowlist: allow('') }).send(get('/ok')));
    expect(error.reason).toBe('address_refused');
  });

  it('refuses cloud metadata addresses even when an allowed network covers them', async () => {
    const lookup = fixedLookup({ [HOST]: '169.254.169.254' });
    const error = await refusal(
      client({ lookup, allowlist: allow(`169.254.0.0/16:${server.port}`) }).send(get('/ok')),
    );
    expect(error.message).toMatch(/cloud metadata endpoint/);
  });

  it('ignores proxy settings in the environment', async () => {
    const saved = { HTTPS_PROXY: process.env.HTTPS_PROXY, https_proxy: process.env.https_proxy };
    process.env.HTTPS_PROXY = 'http://127.0.0.1:9';
    process.env.https_proxy = 'http://127.0.0.1:9';
    try {
      expect((await client().send(get('/ok'))).status).toBe(200);
    } finally {
      for (const [name, value] of Object.entries(saved)) {
        if (value === undefined) delete process.env[name];
        else process.env[name] = value;
      }
    }
  });
});

describe('DNS rebinding', () => {
  it('checks the address it connects to, not an earlier answer for the same name', async () => {
    const answers = ['93.184.215.14', '127.0.0.1'];
    let calls = 0;
    const rebinding = async () => {
      const address = answers[Math.min(calls, answers.length - 1)] as string;
      calls += 1;
      return [{ address, family: 4 }];
    };
    // A check made before the request (as a validator would) sees the public answer...
    expect(await rebinding()).toEqual([{ address: '93.184.215.14', family: 4 }]);
    // ...and the connection, which resolves again, is refused on the loopback answer it got.
    const error = await refusal(client({ lookup: rebinding, allowlist: allow('') }).send(get('/ok')));
    expect(error.reason).toBe('address_refused');
    expect(error.message).toMatch(/resolved to 127\.0\.0\.1/);
    expect(calls).toBe(2);
    expect(server.received).toHaveLength(0);
  });

  it.each(REBINDING_NAMES)('refuses %s, which resolves to %s, at connect time', async (name, address) => {
    const lookup = fixedLookup({ [name]: address });
    const error = await refusal(client({ lookup, allowlist: allow('') }).send(get('/ok', name)));
    expect(error.reason).toBe('address_refused');
  });
});

describe('the create-time hostile URL list, replayed at connect time', () => {
  // The host each hostile URL names, as the URL parser reads it; the entries without an https host are
  // refused for their scheme or shape and have no address to connect to.
  const hosts = HOSTILE_BASE_URLS.flatMap(([label, raw]) => {
    try {
      const parsed = new URL(raw.trim());
      return parsed.protocol === 'https:' && parsed.hostname !== ''
        ? [[label, parsed.hostname] as const]
        : [];
    } catch {
      return [];
    }
  });
  const literal = (host: string) => /^[\d.]+$|^\[/.test(host);

  it('covers both literal addresses and names', () => {
    expect(hosts.filter(([, host]) => literal(host)).length).toBeGreaterThanOrEqual(25);
    expect(hosts.filter(([, host]) => !literal(host)).length).toBeGreaterThanOrEqual(6);
  });

  it.each(hosts.filter(([, host]) => literal(host)))(
    'refuses to connect to %s (%s) without resolving anything',
    async (_label, host) => {
      const lookup = async () => {
        throw new Error('a literal address needs no lookup');
      };
      const error = await refusal(client({ lookup, allowlist: allow('') }).send(get('/ok', host)));
      expect(error.reason).toBe('address_refused');
    },
  );

  it.each(hosts.filter(([, host]) => !literal(host)))(
    'refuses %s (%s) when its name resolves to a loopback or metadata address',
    async (_label, host) => {
      for (const address of ['127.0.0.1', '169.254.169.254', '10.1.2.3', 'fe80::1']) {
        const error = await refusal(
          client({
            lookup: fixedLookup({ [host.replace(/\.+$/u, '')]: address }),
            allowlist: allow(''),
          }).send(get('/ok', host)),
        );
        expect(error.reason).toBe('address_refused');
      }
    },
  );

  it('refuses plain http before connecting', async () => {
    const error = await refusal(
      client().send({ url: `http://${HOST}:${server.port}/ok`, method: 'GET', headers: {} }),
    );
    expect(error.reason).toBe('scheme_refused');
  });
});

describe('redirects', () => {
  beforeAll(() => {
    server.route('/moved', (_request, _body, response) => {
      response.writeHead(302, { location: '/ok' }).end();
    });
    server.route('/elsewhere', (_request, _body, response) => {
      response.writeHead(302, { location: url('/ok', OTHER_HOST) }).end();
    });
    server.route('/downgrade', (_request, _body, response) => {
      response.writeHead(301, { location: `http://${HOST}:${server.port}/ok` }).end();
    });
    server.route('/loop', (_request, _body, response) => {
      response.writeHead(307, { location: '/loop' }).end();
    });
  });

  it('follows a redirect to the same host', async () => {
    const response = await client().send(get('/moved'));
    expect(response.status).toBe(200);
    expect(response.redirects).toBe(1);
    expect(response.url).toBe(url('/ok'));
  });

  it('refuses a redirect to another host without following it', async () => {
    const error = await refusal(client().send(get('/elsewhere')));
    expect(error.reason).toBe('redirect_refused');
    expect(server.received.map((request) => request.url)).toEqual(['/elsewhere']);
  });

  it('refuses a redirect to plain http', async () => {
    const error = await refusal(client().send(get('/downgrade')));
    expect(error.reason).toBe('scheme_refused');
  });

  it('stops after the allowed number of redirects', async () => {
    const error = await refusal(client({ maxRedirects: 2 }).send(get('/loop')));
    expect(error.reason).toBe('redirect_refused');
    expect(server.received).toHaveLength(3);
  });
});

describe('timeouts, size cap and TLS', () => {
  let silent: TcpServer;
  const silentSockets: Socket[] = [];
  beforeAll(async () => {
    server.route('/stall-headers', () => {
      // Never answers; the server closes the socket when the test server stops.
    });
    server.route('/stall-body', (_request, _body, response) => {
      response.writeHead(200, { 'content-type': 'text/plain' });
      response.write('partial');
    });
    // One byte every 50 ms, for as long as the client listens.
    server.route('/trickle', (_request, _body, response) => {
      response.writeHead(200, { 'content-type': 'text/plain' });
      const timer = setInterval(() => response.write('.'), 50);
      response.on('close', () => clearInterval(timer));
    });
    server.route('/slow-loop', (_request, _body, response) => {
      const timer = setTimeout(() => response.writeHead(307, { location: '/slow-loop' }).end(), 100);
      response.on('close', () => clearTimeout(timer));
    });
    server.route('/large', (_request, _body, response) => {
      response.writeHead(200, { 'content-type': 'text/plain' }).end('x'.repeat(2000));
    });
    server.route('/large-chunked', (_request, _body, response) => {
      response.writeHead(200, { 'content-type': 'text/plain' });
      for (let index = 0; index < 20; index += 1) response.write('y'.repeat(100));
      response.end();
    });
    // Accepts TCP connections and never starts TLS.
    silent = createTcpServer((socket) => void silentSockets.push(socket));
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
  });
  afterAll(
    () =>
      new Promise<void>((resolve) => {
        for (const socket of silentSockets) socket.destroy();
        silent.close(() => resolve());
      }),
  );

  it('gives up when no TLS connection is established in time', async () => {
    const port = (silent.address() as AddressInfo).port;
    const error = await refusal(
      client({ connectTimeoutMs: 200, allowlist: allow(`127.0.0.1:${port}`) }).send({
        url: `https://${HOST}:${port}/`,
        method: 'GET',
        headers: {},
      }),
    );
    expect(error.reason).toBe('connect_timeout');
  });

  it('gives up when the response headers do not come in time', async () => {
    const error = await refusal(client({ headersTimeoutMs: 200 }).send(get('/stall-headers')));
    expect(error.reason).toBe('headers_timeout');
  });

  it('gives up when the response body stalls', async () => {
    const error = await refusal(client({ bodyTimeoutMs: 200 }).send(get('/stall-body')));
    expect(error.reason).toBe('body_timeout');
  });

  it('gives up when the whole call outlasts its deadline, though the body never pauses long', async () => {
    const error = await refusal(client({ bodyTimeoutMs: 400, callTimeoutMs: 800 }).send(get('/trickle')));
    expect(error.reason).toBe('call_timeout');
    expect(error.message).toBe(`${HOST}:${server.port} did not finish the call within 800 ms`);
  });

  it('counts every redirect in the deadline', async () => {
    const error = await refusal(client({ callTimeoutMs: 500, maxRedirects: 50 }).send(get('/slow-loop')));
    expect(error.reason).toBe('call_timeout');
  });

  it('ends the call at the caller’s deadline when it comes before its own', async () => {
    const error = await refusal(
      client().send(get('/trickle'), { deadline: { at: Date.now() + 300, ms: 300 } }),
    );
    expect(error.reason).toBe('call_timeout');
    expect(error.message).toBe(`${HOST}:${server.port} did not finish the call within 300 ms`);
  });

  it('refuses a body whose declared length exceeds the cap', async () => {
    const error = await refusal(client({ maxResponseBytes: 1000 }).send(get('/large')));
    expect(error.reason).toBe('response_too_large');
    expect(error.message).toBe('the response body exceeds 1000 bytes');
  });

  it('refuses a chunked body once it grows past the cap', async () => {
    const error = await refusal(client({ maxResponseBytes: 1000 }).send(get('/large-chunked')));
    expect(error.reason).toBe('response_too_large');
  });

  it('returns a body exactly at the cap', async () => {
    const response = await client({ maxResponseBytes: 2000 }).send(get('/large'));
    expect(response.body).toHaveLength(2000);
  });

  it('refuses a server whose certificate it does not trust', async () => {
    const untrusting = createEgressClient({
      lookup: fixedLookup({ [HOST]: '127.0.0.1' }),
      allowlist: allow(`127.0.0.1:${server.port}`),
    });
    clients.push(untrusting);
    const error = await refusal(untrusting.send(get('/ok')));
    expect(error.reason).toBe('tls_failed');
  });

  it('refuses a certificate issued for another name', async () => {
    const lookup = fixedLookup({ 'billing.acme-payments.com': '127.0.0.1' });
    const error = await refusal(client({ lookup }).send(get('/ok', 'billing.acme-payments.com')));
    expect(error.reason).toBe('tls_failed');
  });
});
