import { randomUUID } from 'node:crypto';
import { describe, expect, it, vi } from 'vitest';
import { signToken } from '../../src/auth/tokens.js';
import type { RunningServer } from '../../src/server.js';
import { queueTasks } from '../schema/agents-budgets-support.js';
import { createTestApp, TEST_SECRET, type TestApp } from '../support/app.js';
import { serveTestApp } from '../support/fixtures.js';
import { listen } from '../support/ws.js';
import { callTool, connectMcp, postMcp } from './mcp-support.js';

let t: TestApp;
let server: RunningServer;
serveTestApp((app) => ({ t, server } = app));

const initialize = JSON.stringify({
  jsonrpc: '2.0',
  id: 1,
  method: 'initialize',
  params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'raw', version: '1' } },
});

describe('MCP endpoint access', () => {
  it('refuses a request without a token: 401 with the Bearer challenge and a JSON-RPC error', async () => {
    const response = await postMcp(server, initialize);
    expect(response.status).toBe(401);
    expect(response.headers.get('www-authenticate')).toBe('Bearer');
    expect(response.body).toEqual({
      jsonrpc: '2.0',
      id: null,
      error: { code: -32000, message: 'Not authenticated' },
    });
    expect(response.headers.get('x-request-id')).toBeTruthy();
  });

  it('refuses an invalid token: 401 invalid_token', async () => {
    const response = await postMcp(server, initialize, { authorization: 'Bearer not-a-token' });
    expect(response.status).toBe(401);
    expect(response.headers.get('www-authenticate')).toBe('Bearer error="invalid_token"');
    expect(response.body.error.code).toBe(-32000);
  });

  it('refuses a member and a chairman: 403, the SDK client cannot initialize', async () => {
    for (const roles of [['member'], ['chairman']] as const) {
      const caller = await t.caller([...roles]);
      const response = await postMcp(server, initialize, { authorization: `Bearer ${caller.token}` });
      expect(response.status).toBe(403);
      expect(response.body.error).toEqual({
        code: -32000,
        message: 'Not allowed for your role: the MCP endpoint serves agents and operators',
      });
      await expect(connectMcp(server, caller)).rejects.toThrow();
    }
  });

  it('stops serving a session whose token expired, and the refused call changes nothing', async () => {
    const tenantId = randomUUID();
    const token = await signToken(TEST_SECRET, { tenantId, sub: 'agent-1', roles: ['agent'], ttl: '1m' });
    const expiresAt =
      JSON.parse(Buffer.from(token.split('.')[1] as string, 'base64url').toString()).exp * 1000;
    await queueTasks(t, tenantId, 'cfo', 1);
    const client = await connectMcp(server, { token });
    expect((await client.listTools()).tools.length).toBeGreaterThan(0);
    // The clock moves past exp instead of the test waiting for it: however slow the session's start, the
    // token was valid for it and is expired for the call.
    vi.useFakeTimers({ toFake: ['Date'], now: expiresAt + 1000 });
    try {
      await expect(callTool(client, 'claim_next_task', { role: 'cfo' })).rejects.toThrow(
        /401|Unauthorized|expired/i,
      );
    } finally {
      vi.useRealTimers();
    }
    expect(await t.db.prisma.task.count({ where: { tenantId, status: 'pending' } })).toBe(1);
    await client.close();
  });

  it('answers malformed JSON, a non-JSON-RPC body and DELETE with JSON-RPC errors, never a 500', async () => {
    const agent = await t.caller(['agent']);
    const authorization = `Bearer ${agent.token}`;
    const broken = await postMcp(server, '{"jsonrpc": "2.0", "id": 1,', { authorization });
    expect(broken.status).toBe(400);
    expect(broken.body).toMatchObject({ jsonrpc: '2.0', id: null, error: { code: -32700 } });
    const notRpc = await postMcp(server, '{"hello": "world"}', { authorization });
    expect(notRpc.status).toBe(400);
    expect(notRpc.body.error.code).toBeLessThan(-32000);
    const end = await fetch(`${server.url}/mcp`, { method: 'DELETE', headers: { authorization } });
    expect(end.status).toBe(405);
    expect(end.headers.get('allow')).toBe('GET, POST');
    expect(await end.json()).toEqual({
      jsonrpc: '2.0',
      id: null,
      error: { code: -32000, message: 'Method Not Allowed: the MCP endpoint takes GET and POST' },
    });
  });

  it('refuses a body over the limit with 413 before reading it, and an oversized argument by its field’s rule', async () => {
    const agent = await t.caller(['agent']);
    await queueTasks(t, agent.tenantId, 'cfo', 1);
    const big = JSON.stringify({
      jsonrpc: '2.0',
      id: 2,
      method: 'tools/call',
      params: { name: 'fail_task', arguments: { taskId: randomUUID(), error: 'x'.repeat(2 * 1024 * 1024) } },
    });
    const tooLarge = await postMcp(server, big, { authorization: `Bearer ${agent.token}` });
    expect(tooLarge.status).toBe(413);
    expect(tooLarge.body).toEqual({
      jsonrpc: '2.0',
      id: null,
      error: { code: -32000, message: 'Request body exceeds 1048576 bytes' },
    });

    const client = await connectMcp(server, agent);
    const claim = (await callTool(client, 'claim_next_task', { role: 'cfo' })).structuredContent
      .claimNextTask;
    await expect(
      callTool(client, 'complete_task', {
        taskId: claim.task.id,
        output: 'x'.repeat(1_000_001),
        tokensUsed: 1,
        costUsd: 0,
      }),
    ).rejects.toMatchObject({
      code: -32602,
      data: { detail: [{ type: 'string_too_long', loc: ['output'] }] },
    });
    expect(await t.db.prisma.task.findUniqueOrThrow({ where: { id: claim.task.id } })).toMatchObject({
      status: 'running',
    });
    await client.close();
  });
});

describe('MCP endpoint limits and metadata', () => {
  it('answers the rate limit as a JSON-RPC error with Retry-After', async () => {
    const limited = await createTestApp({ env: { RATE_LIMIT_PER_MINUTE: '2' } });
    const limitedServer = await listen(limited);
    try {
      const agent = await limited.caller(['agent']);
      const authorization = `Bearer ${agent.token}`;
      const statuses: number[] = [];
      let last: Awaited<ReturnType<typeof postMcp>> | undefined;
      for (let i = 0; i < 3; i += 1) {
        last = await postMcp(limitedServer, initialize, { authorization });
        statuses.push(last.status);
      }
      expect(statuses).toEqual([200, 200, 429]);
      expect(last?.headers.get('retry-after')).toMatch(/^\d+$/);
      expect(last?.body).toMatchObject({ jsonrpc: '2.0', id: null, error: { code: -32000 } });
    } finally {
      await limitedServer.close();
      await limited.close();
    }
  });

  it('answers tool calls beyond the database budget as tool errors with retryAfter, never a 500', async () => {
    const shedding = await createTestApp({ env: { DATABASE_POOL_SIZE: '1', DATABASE_QUEUE_SIZE: '0' } });
    try {
      const agent = await shedding.caller(['agent']);
      const call = async () => {
        const response = await shedding.app.yoga.fetch('http://127.0.0.1/mcp', {
          method: 'POST',
          headers: {
            'content-type': 'application/json',
            accept: 'application/json, text/event-stream',
            authorization: `Bearer ${agent.token}`,
          },
          body: JSON.stringify({
            jsonrpc: '2.0',
            id: 1,
            method: 'tools/call',
            params: { name: 'claim_next_task', arguments: { role: 'cfo' } },
          }),
        });
        return { status: response.status, body: (await response.json()) as any };
      };
      const answers = await Promise.all(Array.from({ length: 20 }, call));
      expect(answers.every((answer) => answer.status === 200)).toBe(true);
      const refused = answers.filter((answer) => answer.body.result?.isError);
      expect(refused.length).toBeGreaterThan(0);
      expect(refused[0]?.body.result).toEqual({
        content: [{ type: 'text', text: 'Service temporarily unavailable; retry in 2 s' }],
        structuredContent: {
          error: {
            message: 'Service temporarily unavailable; retry in 2 s',
            code: 'SERVICE_UNAVAILABLE',
            retryAfter: 2,
            status: 503,
          },
        },
        isError: true,
      });
      expect(answers.some((answer) => answer.body.result?.structuredContent?.claimNextTask)).toBe(true);
    } finally {
      await shedding.close();
    }
  });

  it('publishes the protected resource metadata only when an external identity provider is configured', async () => {
    const none = await fetch(`${server.url}/.well-known/oauth-protected-resource`);
    expect(none.status).toBe(404);

    const external = await createTestApp({
      env: { AUTH_JWKS_URL: 'https://idp.example.com/jwks.json', AUTH_ISSUER: 'https://idp.example.com/' },
    });
    const externalServer = await listen(external);
    try {
      for (const path of [
        '/.well-known/oauth-protected-resource',
        '/.well-known/oauth-protected-resource/mcp',
      ]) {
        const metadata = await fetch(`${externalServer.url}${path}`);
        expect(metadata.status).toBe(200);
        expect(await metadata.json()).toEqual({
          resource: `${externalServer.url}/mcp`,
          authorization_servers: ['https://idp.example.com/'],
          bearer_methods_supported: ['header'],
          resource_name: 'Boardroom',
        });
      }
      const anonymous = await postMcp(externalServer, initialize);
      expect(anonymous.status).toBe(401);
      expect(anonymous.headers.get('www-authenticate')).toBe(
        `Bearer resource_metadata="${externalServer.url}/.well-known/oauth-protected-resource/mcp"`,
      );
    } finally {
      await externalServer.close();
      await external.close();
    }
  });
});
