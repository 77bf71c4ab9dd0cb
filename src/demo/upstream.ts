import { createServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { selfSignedCertificate } from './certificate.js';

/** The host name the demo ledger answers to; only the demo gateway resolves it (to 127.0.0.1). */
export const DEMO_UPSTREAM_HOST = 'ledger.demo.boardroom.example';

export interface DemoUpstream {
  /** `https://<DEMO_UPSTREAM_HOST>:<port>/v1`: the connector's base_url. */
  baseUrl: string;
  port: number;
  /** The address it listens on (always 127.0.0.1). */
  address: string;
  /** Its self-signed certificate, for the gateway's egress client to trust. */
  cert: string;
  /** Requests it answered, in order: `METHOD /path`. */
  received: string[];
  close(): Promise<void>;
}

const INVOICES = [
  { id: 'inv_1001', customer: 'Northwind', amountUsd: 1200, status: 'overdue', dueDate: '2026-10-31' },
  { id: 'inv_1002', customer: 'Globex', amountUsd: 430, status: 'open', dueDate: '2026-12-15' },
  { id: 'inv_1003', customer: 'Initech', amountUsd: 2890, status: 'overdue', dueDate: '2026-11-05' },
];

/**
 * A tiny ledger on loopback over HTTPS (connectors speak https only): `GET /v1/invoices` lists invoices
 * (`?status=` filters), `POST /v1/payments` records a payment (the demo's approval policy gates it).
 */
export async function startDemoUpstream(port = 0): Promise<DemoUpstream> {
  const { cert, key } = selfSignedCertificate(DEMO_UPSTREAM_HOST);
  const received: string[] = [];
  let payments = 0;
  const server = createServer({ cert, key }, (request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const url = new URL(request.url ?? '/', `https://${DEMO_UPSTREAM_HOST}`);
      received.push(`${request.method} ${url.pathname}`);
      const json = (status: number, body: unknown) =>
        response.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
      if (request.method === 'GET' && url.pathname === '/v1/invoices') {
        const status = url.searchParams.get('status');
        return json(
          200,
          INVOICES.filter((invoice) => !status || invoice.status === status),
        );
      }
      if (request.method === 'POST' && url.pathname === '/v1/payments') {
        payments += 1;
        let body: unknown = null;
        try {
          body = JSON.parse(Buffer.concat(chunks).toString('utf8') || 'null');
        } catch {}
        return json(201, { id: `pay_${payments}`, status: 'scheduled', request: body });
      }
      json(404, { error: 'not found' });
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, '127.0.0.1', () => resolve());
  });
  const bound = server.address() as AddressInfo;
  return {
    baseUrl: `https://${DEMO_UPSTREAM_HOST}:${bound.port}/v1`,
    port: bound.port,
    address: bound.address,
    cert,
    received,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
