import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { loadConfig } from '../../src/config.js';
import type { RunningServer } from '../../src/server.js';
import { type Caller, createTestApp, type TestApp } from '../support/app.js';
import { openSse, type SseStream, untilSseDelivered } from '../support/sse.js';
import { closeCodeFor, listen, openSocket, type RawSocket } from '../support/ws.js';

const OnAgentPaused = 'subscription { agentPaused { eventId role } }';

let t: TestApp;
let server: RunningServer;
beforeAll(async () => {
  t = await createTestApp({ env: { MAX_STREAMS_PER_CALLER: '2', RETRY_AFTER_SECONDS: '3' } });
  server = await listen(t);
});
afterAll(async () => {
  await server.close();
  await t.close();
});
afterEach(() => {
  vi.restoreAllMocks();
});

async function liveSse(caller: Caller): Promise<SseStream> {
  const stream = await openSse(server.url, caller, OnAgentPaused);
  expect(stream.status).toBe(200);
  await untilSseDelivered(t, stream, caller.tenantId);
  return stream;
}

/** Retries `open` until it succeeds: the server counts a stream out once it has seen it close. */
async function eventually<T>(open: () => Promise<T>): Promise<T> {
  for (let attempt = 0; ; attempt += 1) {
    try {
      return await open();
    } catch (error) {
      if (attempt === 50) throw error;
    }
  }
}

async function sseOpened(caller: Caller): Promise<SseStream> {
  const stream = await openSse(server.url, caller, OnAgentPaused);
  if (stream.status !== 200) {
    await stream.close();
    throw new Error(`answered ${stream.status}`);
  }
  return stream;
}

describe('streams per caller (MAX_STREAMS_PER_CALLER)', () => {
  it('refuses an SSE subscription over the limit with 429 and Retry-After, before any stream is opened', async () => {
    const member = await t.caller(['member']);
    const open = [await liveSse(member), await liveSse(member)];
    const listen = vi.spyOn(t.app.services.bus, 'listen');

    const refused = await openSse(server.url, member, OnAgentPaused);
    expect(refused.status).toBe(429);
    expect(refused.headers.get('retry-after')).toBe('3');
    expect(await refused.next()).toMatchObject({
      event: 'next',
      data: {
        errors: [
          {
            message:
              'Too many open streams: at most 2 WebSockets and server-sent event subscriptions per caller',
            extensions: { code: 'RATE_LIMITED', retryAfter: 3 },
          },
        ],
      },
    });
    await refused.ended();
    expect(listen).not.toHaveBeenCalled();
    await Promise.all(open.map((stream) => stream.close()));
  });

  it('counts a caller’s WebSockets and SSE subscriptions together, each subject apart', async () => {
    const member = await t.caller(['member']);
    const colleague = await t.caller(['member'], { tenantId: member.tenantId });
    const socket = await openSocket(server.url, member);
    const stream = await liveSse(member);

    expect((await openSse(server.url, member, OnAgentPaused)).status).toBe(429);
    expect(await closeCodeFor(server.url, { authorization: `Bearer ${member.token}` })).toBe(1008);
    const other = await liveSse(colleague);

    await Promise.all([socket.close(), stream.close(), other.close()]);
  });

  it('gives the slot back when the client closes its SSE stream', async () => {
    const member = await t.caller(['member']);
    const first = await liveSse(member);
    const second = await liveSse(member);

    await first.close();
    const third = await eventually(() => sseOpened(member));
    await Promise.all([second.close(), third.close()]);
  });

  it('gives the slot back when a socket closes, to an SSE subscription', async () => {
    const member = await t.caller(['member']);
    const sockets: RawSocket[] = [await openSocket(server.url, member), await openSocket(server.url, member)];
    expect((await openSse(server.url, member, OnAgentPaused)).status).toBe(429);

    await sockets[0]?.close();
    const stream = await eventually(() => sseOpened(member));
    await Promise.all([sockets[1]?.close(), stream.close()]);
  });

  it('holds no slot for a subscription refused because the request accepts no stream (406)', async () => {
    const member = await t.caller(['member']);
    for (let attempt = 0; attempt < 3; attempt += 1) {
      const response = await fetch(`${server.url}/graphql`, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          accept: 'application/json',
          authorization: `Bearer ${member.token}`,
        },
        body: JSON.stringify({ query: OnAgentPaused }),
      });
      await response.arrayBuffer();
      expect(response.status).toBe(406);
    }
    const streams = [await liveSse(member), await liveSse(member)];
    await Promise.all(streams.map((stream) => stream.close()));
  });

  it('holds no slot for a subscription that fails before its stream opens', async () => {
    const member = await t.caller(['member']);
    for (let attempt = 0; attempt < 3; attempt += 1) {
      const refused = await openSse(
        server.url,
        member,
        'subscription { agentPaused(after: "not-an-event-id") { eventId } }',
      );
      await refused.ended();
      expect(refused.received()[0]?.data?.errors).toBeDefined();
    }
    const streams = [await liveSse(member), await liveSse(member)];
    await Promise.all(streams.map((stream) => stream.close()));
  });
});

describe('the setting', () => {
  const base = { AUTH_JWT_SECRET: 'x'.repeat(32) };

  it('is 20 by default', () => {
    expect(loadConfig(base).maxStreamsPerCaller).toBe(20);
  });

  it('still reads WS_MAX_SOCKETS_PER_CALLER, its older name, when MAX_STREAMS_PER_CALLER is unset', () => {
    expect(loadConfig({ ...base, WS_MAX_SOCKETS_PER_CALLER: '7' }).maxStreamsPerCaller).toBe(7);
    expect(
      loadConfig({ ...base, WS_MAX_SOCKETS_PER_CALLER: '7', MAX_STREAMS_PER_CALLER: '9' })
        .maxStreamsPerCaller,
    ).toBe(9);
  });
});
