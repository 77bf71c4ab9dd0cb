import { execFile } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer, request as httpRequest, type Server } from 'node:http';
import { createRequire } from 'node:module';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { callerKey } from '../../src/rate-limit.js';
import type { RunningServer } from '../../src/server.js';
import { queueTasks } from '../schema/agents-budgets-support.js';
import { createTestApp, type TestApp } from '../support/app.js';
import { serveTestApp } from '../support/fixtures.js';
import { listen } from '../support/ws.js';
import { callTool, connectMcp } from './mcp-support.js';

const initialize = JSON.stringify({
  jsonrpc: '2.0',
  id: 1,
  method: 'initialize',
  params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'raw', version: '1' } },
});

const claim = JSON.stringify({
  jsonrpc: '2.0',
  id: 2,
  method: 'tools/call',
  params: { name: 'claim_next_task', arguments: { role: 'cfo' } },
});

/** One request to the server's `/mcp` over node:http, which sends `Host` and `Origin` as given. */
function rawMcp(
  server: RunningServer,
  options: { method?: string; headers: Record<string, string>; body?: string },
): Promise<{ status: number; body: any; headers: Record<string, unknown> }> {
  const { port } = new URL(server.url);
  return new Promise((resolve, reject) => {
    const sent = httpRequest(
      {
        host: '127.0.0.1',
        port,
        path: '/mcp',
        method: options.method ?? 'POST',
        headers: {
          'content-type': 'application/json',
          accept: 'application/json, text/event-stream',
          ...options.headers,
        },
      },
      (response) => {
        let text = '';
        response.setEncoding('utf8');
        response.on('data', (chunk: string) => {
          text += chunk;
          // A stream that was opened answers with its first comment: enough to know it was not refused.
          if (response.headers['content-type']?.startsWith('text/event-stream')) response.destroy();
        });
        const done = () => {
          let body: unknown = text;
          try {
            body = JSON.parse(text);
          } catch {}
          resolve({ status: response.statusCode ?? 0, body, headers: response.headers });
        };
        response.on('end', done);
        response.on('close', done);
      },
    );
    sent.on('error', reject);
    sent.end(options.body);
  });
}

describe('MCP endpoint: Origin and Host (bound to loopback)', () => {
  let t: TestApp;
  let server: RunningServer;
  beforeAll(async () => {
    t = await createTestApp({
      env: {
        MCP_ALLOWED_ORIGINS: 'https://console.example.com',
        MCP_ALLOWED_HOSTS: 'boardroom.internal',
      },
    });
    server = await listen(t);
  });
  afterAll(async () => {
    await server?.close();
    await t?.close();
  });

  it('refuses a foreign Origin with 403 before anything runs, whatever the token', async () => {
    const agent = await t.caller(['agent']);
    await queueTasks(t, agent.tenantId, 'cfo', 1);
    const { port } = new URL(server.url);
    for (const origin of ['http://evil.example.com', `http://evil.example.com:${port}`, 'null']) {
      const refused = await rawMcp(server, {
        headers: { authorization: `Bearer ${agent.token}`, origin, host: `127.0.0.1:${port}` },
        body: claim,
      });
      expect(refused.status).toBe(403);
      expect(refused.body).toEqual({
        jsonrpc: '2.0',
        id: null,
        error: { code: -32000, message: `Forbidden: the origin ${origin} may not use the MCP endpoint` },
      });
    }
    expect(await t.db.prisma.task.count({ where: { tenantId: agent.tenantId, status: 'pending' } })).toBe(1);
  });

  it('refuses a Host that is not loopback (DNS rebinding) with 403, even without an Origin', async () => {
    const agent = await t.caller(['agent']);
    await queueTasks(t, agent.tenantId, 'cfo', 1);
    const { port } = new URL(server.url);
    for (const host of [`evil.example.com:${port}`, 'evil.example.com', `10.0.0.5:${port}`]) {
      const refused = await rawMcp(server, {
        headers: { authorization: `Bearer ${agent.token}`, host },
        body: claim,
      });
      expect(refused.status).toBe(403);
      expect(refused.body.error).toEqual({
        code: -32000,
        message: `Forbidden: the host ${host} may not use the MCP endpoint`,
      });
    }
    expect(await t.db.prisma.task.count({ where: { tenantId: agent.tenantId, status: 'pending' } })).toBe(1);
  });

  it('refuses the GET stream from a foreign Origin without taking a stream slot', async () => {
    const agent = await t.caller(['agent']);
    const refused = await rawMcp(server, {
      method: 'GET',
      headers: {
        authorization: `Bearer ${agent.token}`,
        origin: 'https://evil.example.com',
        accept: 'text/event-stream',
      },
    });
    expect(refused.status).toBe(403);
    expect(t.app.services.streams.held(callerKey(agent))).toBe(0);
  });

  it('answers without a token 403, not 401, to a foreign Origin: nothing about the endpoint is told', async () => {
    const refused = await rawMcp(server, {
      headers: { origin: 'https://evil.example.com' },
      body: initialize,
    });
    expect(refused.status).toBe(403);
    expect(refused.headers['www-authenticate']).toBeUndefined();
  });

  it('serves loopback hosts, its own loopback origin, the configured origins and hosts, and clients sending no Origin', async () => {
    const agent = await t.caller(['agent']);
    const { port } = new URL(server.url);
    const allowed: Record<string, string>[] = [
      { host: `127.0.0.1:${port}` },
      { host: `localhost:${port}` },
      { host: `[::1]:${port}` },
      { host: `127.0.0.1:${port}`, origin: `http://127.0.0.1:${port}` },
      { host: `localhost:${port}`, origin: `http://localhost:${port}` },
      { host: `127.0.0.1:${port}`, origin: 'https://console.example.com' },
      { host: 'boardroom.internal' },
      { host: `boardroom.internal:${port}`, origin: 'https://console.example.com' },
    ];
    for (const headers of allowed) {
      const answer = await rawMcp(server, {
        headers: { authorization: `Bearer ${agent.token}`, ...headers },
        body: initialize,
      });
      expect({ headers, status: answer.status }).toEqual({ headers, status: 200 });
    }
    // Another loopback page (another port) is another origin.
    const otherPage = await rawMcp(server, {
      headers: { authorization: `Bearer ${agent.token}`, origin: 'http://localhost:5173' },
      body: initialize,
    });
    expect(otherPage.status).toBe(403);
  });

  it('serves the SDK client from a configured origin end to end', async () => {
    const agent = await t.caller(['agent']);
    await queueTasks(t, agent.tenantId, 'cfo', 1);
    const client = await connectMcp(server, agent, { origin: 'https://console.example.com' });
    const claimed = await callTool(client, 'claim_next_task', { role: 'cfo' });
    expect(claimed.structuredContent.claimNextTask.outcome).toBe('claimed');
    await client.close();
    await expect(connectMcp(server, agent, { origin: 'https://evil.example.com' })).rejects.toThrow(
      /Forbidden: the origin https:\/\/evil.example.com may not use the MCP endpoint/,
    );
  });
});

describe('MCP endpoint: Origin and Host (bound to every interface)', () => {
  it('takes any Host when HOST is not loopback, and still refuses a foreign Origin', async () => {
    const t = await createTestApp({ env: { HOST: '0.0.0.0' } });
    const server = await listen(t);
    try {
      const agent = await t.caller(['agent']);
      const authorization = `Bearer ${agent.token}`;
      const served = await rawMcp(server, {
        headers: { authorization, host: 'boardroom.example.com' },
        body: initialize,
      });
      expect(served.status).toBe(200);
      const refused = await rawMcp(server, {
        headers: { authorization, host: 'boardroom.example.com', origin: 'https://evil.example.com' },
        body: initialize,
      });
      expect(refused.status).toBe(403);
      // Its own origin is not trusted either off loopback: a rebinding page's origin is its own too.
      const sameOrigin = await rawMcp(server, {
        headers: { authorization, host: 'boardroom.example.com', origin: 'http://boardroom.example.com' },
        body: initialize,
      });
      expect(sameOrigin.status).toBe(403);
    } finally {
      await server.close();
      await t.close();
    }
  });
});

/**
 * A loopback proxy that adds a bearer token to every request and forwards it otherwise unchanged (its Host
 * and Origin included), as an MCP client configured with a token would send it: the conformance suite's
 * requests carry no token, and the endpoint answers every request without one 401.
 */
async function startTokenProxy(
  target: RunningServer,
  token: string,
): Promise<{ url: string; close(): Promise<void> }> {
  const { port } = new URL(target.url);
  const proxy: Server = createServer((incoming, outgoing) => {
    const forwarded = httpRequest(
      {
        host: '127.0.0.1',
        port,
        method: incoming.method,
        path: incoming.url,
        headers: { ...incoming.headers, authorization: `Bearer ${token}` },
      },
      (answer) => {
        outgoing.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(outgoing);
      },
    );
    forwarded.on('error', () => outgoing.destroy());
    incoming.pipe(forwarded);
  });
  await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(proxy.address() as AddressInfo).port}`,
    close: () =>
      new Promise<void>((resolve) => {
        proxy.closeAllConnections();
        proxy.close(() => resolve());
      }),
  };
}

const require = createRequire(import.meta.url);
/** The conformance suite's command line (it needs Node ≥ 22: it imports `fs.globSync`). */
const conformanceCli = require.resolve('@modelcontextprotocol/conformance/dist/index.js');

describe('the MCP conformance suite', () => {
  let t: TestApp;
  let server: RunningServer;
  serveTestApp((app) => ({ t, server } = app));

  it('passes dns-rebinding-protection', async (context) => {
    const major = Number(process.versions.node.split('.')[0]);
    if (major < 22) {
      const reason = `the MCP conformance suite needs Node ≥ 22, and this test runs on Node ${process.version}`;
      if (process.env.MCP_CONFORMANCE === '1') throw new Error(`MCP_CONFORMANCE=1: ${reason}`);
      context.skip(`${reason} (MCP_CONFORMANCE=1 makes this a failure)`);
    }
    const agent = await t.caller(['agent']);
    const proxy = await startTokenProxy(server, agent.token);
    const results = await mkdtemp(path.join(tmpdir(), 'boardroom-conformance-'));
    try {
      const run = await new Promise<{ code: number; output: string }>((resolve) => {
        execFile(
          process.execPath,
          [
            conformanceCli,
            'server',
            '--url',
            `${proxy.url}/mcp`,
            '--scenario',
            'dns-rebinding-protection',
            '--output-dir',
            results,
          ],
          { cwd: results, timeout: 60_000 },
          (error, stdout, stderr) =>
            resolve({
              code: error ? (typeof error.code === 'number' ? error.code : 1) : 0,
              output: stdout + stderr,
            }),
        );
      });
      expect(run.output).toMatch(/localhost-host-rebinding-rejected/);
      expect(run, run.output).toMatchObject({ code: 0 });
    } finally {
      await proxy.close();
      await rm(results, { recursive: true, force: true });
    }
  });
});
