import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type { RunningServer } from '../../src/server.js';
import { createTestApp, type TestApp } from '../support/app.js';
import { closeCodeFor, listen, openSocket, type RawSocket, untilDelivered } from '../support/ws.js';

const OnAgentPaused = 'subscription { agentPaused { eventId role } }';

let t: TestApp;
let server: RunningServer;
beforeAll(async () => {
  t = await createTestApp({
    env: {
      WS_MAX_SUBSCRIPTIONS_PER_SOCKET: '2',
      WS_MAX_SOCKETS_PER_CALLER: '2',
      WS_MAX_FRAME_BYTES: '8192',
      WS_MAX_INIT_BYTES: '2048',
      WS_CONNECTION_INIT_TIMEOUT_MS: '500',
    },
  });
  server = await listen(t);
});
afterAll(async () => {
  await server.close();
  await t.close();
});

describe('subscriptions per socket (WS_MAX_SUBSCRIPTIONS_PER_SOCKET)', () => {
  it('answers an error for the operation over the limit and keeps the socket and its subscriptions', async () => {
    const member = await t.caller(['member']);
    const socket = await openSocket(server.url, member);
    socket.subscribe('first', OnAgentPaused);
    await untilDelivered(t, socket, 'first', member.tenantId);
    socket.subscribe('second', OnAgentPaused);
    await untilDelivered(t, socket, 'second', member.tenantId);

    socket.subscribe('third', OnAgentPaused);
    expect(await socket.settled('third')).toEqual([
      {
        id: 'third',
        type: 'error',
        payload: [
          {
            message: 'At most 2 operations may be open on one socket',
            extensions: { code: 'BAD_REQUEST', http: { status: 400 } },
          },
        ],
      },
    ]);

    socket.complete('first');
    socket.subscribe('fourth', OnAgentPaused);
    await untilDelivered(t, socket, 'fourth', member.tenantId);
    expect(socket.socket.readyState).toBe(socket.socket.OPEN);
    await socket.close();
  });
});

describe('sockets per caller (WS_MAX_SOCKETS_PER_CALLER)', () => {
  it('closes a socket over the limit with 1008, counts each subject apart, and frees a slot on close', async () => {
    const member = await t.caller(['member']);
    const colleague = await t.caller(['member'], { tenantId: member.tenantId });
    const first = await openSocket(server.url, member);
    const second = await openSocket(server.url, member);

    expect(await closeCodeFor(server.url, { authorization: `Bearer ${member.token}` })).toBe(1008);
    const other = await openSocket(server.url, colleague);

    await first.close();
    // The server counts the socket out once it has seen it close, which may trail the client by a moment.
    let third: RawSocket | undefined;
    for (let attempt = 0; !third; attempt += 1) {
      third = await openSocket(server.url, member).catch((error) => {
        if (attempt === 20) throw error;
        return undefined;
      });
    }
    await Promise.all([second.close(), other.close(), third.close()]);
  });
});

describe('frame sizes', () => {
  it('closes with 1009 a socket that sends more than WS_MAX_INIT_BYTES before connection_init', async () => {
    const socket = await openSocket(server.url, null);
    socket.socket.send('x'.repeat(4096));
    expect(await socket.closed()).toBe(1009);
  });

  it('closes with 1009 a socket that sends a frame over WS_MAX_FRAME_BYTES after connection_init', async () => {
    const member = await t.caller(['member']);
    const socket = await openSocket(server.url, member);
    const stderr = vi.spyOn(console, 'error');
    try {
      socket.subscribe('big', `{ me { sub } } # ${'x'.repeat(10_000)}`);
      expect(await socket.closed()).toBe(1009);
      // The client's violation, not an internal error of the server to print on stderr.
      expect(stderr).not.toHaveBeenCalled();
    } finally {
      stderr.mockRestore();
    }
  });

  it('accepts a frame under WS_MAX_FRAME_BYTES after connection_init, larger than the pre-init budget', async () => {
    const member = await t.caller(['member']);
    const socket = await openSocket(server.url, member);
    socket.subscribe('large', `{ me { sub } } # ${'x'.repeat(4096)}`);
    expect((await socket.settled('large'))[0]).toMatchObject({
      payload: { data: { me: { sub: member.sub } } },
    });
    await socket.close();
  });

  it('still closes with 4408 a socket that never sends connection_init', async () => {
    const socket = await openSocket(server.url, null);
    expect(await socket.closed()).toBe(4408);
  });
});

describe('rate limit of subscribe messages', () => {
  let limited: TestApp;
  let limitedServer: RunningServer;
  beforeAll(async () => {
    limited = await createTestApp({ env: { RATE_LIMIT_PER_MINUTE: '3' } });
    limitedServer = await listen(limited);
  });
  afterAll(async () => {
    await limitedServer.close();
    await limited.close();
  });

  it('answers RATE_LIMITED for the id over the caller’s budget and keeps the socket open', async () => {
    const member = await limited.caller(['member']);
    const socket = await openSocket(limitedServer.url, member);
    for (const id of ['1', '2', '3']) {
      socket.subscribe(id, '{ me { sub } }');
      expect((await socket.settled(id)).map((message) => message.type)).toEqual(['next', 'complete']);
    }
    socket.subscribe('4', '{ me { sub } }');
    const [refused] = await socket.settled('4');
    expect(refused).toMatchObject({
      type: 'error',
      payload: [
        {
          message: expect.stringMatching(/^Too many requests; retry in \d+ s$/),
          extensions: { code: 'RATE_LIMITED' },
        },
      ],
    });
    expect(socket.socket.readyState).toBe(socket.socket.OPEN);

    const colleague = await limited.caller(['member'], { tenantId: member.tenantId });
    const other = await openSocket(limitedServer.url, colleague);
    other.subscribe('1', '{ me { sub } }');
    expect((await other.settled('1')).map((message) => message.type)).toEqual(['next', 'complete']);
    await Promise.all([socket.close(), other.close()]);
  });
});
