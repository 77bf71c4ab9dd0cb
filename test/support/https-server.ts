import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';

/** Host names the test certificate is valid for; tests resolve them to loopback with an injected lookup. */
export const TEST_HOSTS = ['api.acme-payments.com', 'files.acme-payments.com'] as const;

export interface TestCertificate {
  cert: string;
  key: string;
}

/** A fresh self-signed certificate for `hosts` and 127.0.0.1, made with the openssl command line. */
export async function createTestCertificate(hosts: readonly string[] = TEST_HOSTS): Promise<TestCertificate> {
  const dir = await mkdtemp(path.join(tmpdir(), 'boardroom-tls-'));
  try {
    const san = [...hosts.map((host) => `DNS:${host}`), 'IP:127.0.0.1'].join(',');
    await promisify(execFile)('openssl', [
      'req',
      '-x509',
      '-newkey',
      'ec',
      '-pkeyopt',
      'ec_paramgen_curve:prime256v1',
      '-nodes',
      '-days',
      '1',
      '-subj',
      '/CN=boardroom test server',
      '-addext',
      `subjectAltName=${san}`,
      '-keyout',
      path.join(dir, 'key.pem'),
      '-out',
      path.join(dir, 'cert.pem'),
    ]);
    const [cert, key] = await Promise.all([
      readFile(path.join(dir, 'cert.pem'), 'utf8'),
      readFile(path.join(dir, 'key.pem'), 'utf8'),
    ]);
    return { cert, key };
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

export type Handler = (request: IncomingMessage, body: string, response: ServerResponse) => void;

export interface TestHttpsServer {
  port: number;
  /** Requests received so far, with their bodies. */
  received: { method: string; url: string; headers: IncomingMessage['headers']; body: string }[];
  /** Replaces the handler of a path (exact match of the request path without its query). */
  route(pathname: string, handler: Handler): void;
  close(): Promise<void>;
}

/** An HTTPS server on 127.0.0.1, port 0, answering 404 to paths without a handler. */
export async function startHttpsServer(certificate: TestCertificate): Promise<TestHttpsServer> {
  const handlers = new Map<string, Handler>();
  const received: TestHttpsServer['received'] = [];
  const server: Server = createServer(certificate, (request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      received.push({ method: request.method ?? '', url: request.url ?? '', headers: request.headers, body });
      const pathname = new URL(request.url ?? '/', 'https://test').pathname;
      const handler = handlers.get(pathname);
      if (handler) handler(request, body, response);
      else response.writeHead(404, { 'content-type': 'application/json' }).end('{"error":"not found"}');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: (server.address() as AddressInfo).port,
    received,
    route: (pathname, handler) => void handlers.set(pathname, handler),
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** A lookup that answers fixed addresses per host name, and fails like DNS for any other name. */
export function fixedLookup(answers: Record<string, string | string[]>) {
  return async (hostname: string) => {
    const answer = answers[hostname];
    if (answer === undefined)
      throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: 'ENOTFOUND' });
    return (Array.isArray(answer) ? answer : [answer]).map((address) => ({
      address,
      family: address.includes(':') ? 6 : 4,
    }));
  };
}
