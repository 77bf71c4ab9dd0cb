import { randomUUID } from 'node:crypto';
import { describe, expect, it, vi } from 'vitest';
import type { RunningServer } from '../../src/server.js';
import type { Caller, TestApp } from '../support/app.js';
import { serveTestApp } from '../support/fixtures.js';
import { nextEvent, openSocket, type RawSocket, untilDelivered } from '../support/ws.js';

const OnAgentPaused = 'subscription OnAgentPaused { agentPaused { eventId role } }';

let t: TestApp;
let server: RunningServer;
serveTestApp((app) => ({ t, server } = app));

/** A socket of a chairman with a live `agentPaused` subscription under id `live`. */
async function socketWithLiveSubscription(): Promise<{ chairman: Caller; socket: RawSocket }> {
  const chairman = await t.caller(['chairman']);
  const socket = await openSocket(server.url, chairman);
  socket.subscribe('live', OnAgentPaused);
  await untilDelivered(t, socket, 'live', chairman.tenantId);
  return { chairman, socket };
}

describe('graphql-ws carries every operation type', () => {
  it('answers a query, a mutation, a syntax error and an invalid field by id, and keeps the subscription live', async () => {
    const { chairman, socket } = await socketWithLiveSubscription();

    socket.subscribe('query', 'query Me { me { tenantId sub roles } }');
    socket.subscribe('mutation', 'mutation { setDogfoodLiveMode(enabled: true) { dogfoodLiveMode } }');
    socket.subscribe('syntax', '{ me { ');
    socket.subscribe('invalid', '{ me { nope } }');

    expect(await socket.settled('query')).toEqual([
      {
        id: 'query',
        type: 'next',
        payload: { data: { me: { tenantId: chairman.tenantId, sub: chairman.sub, roles: ['chairman'] } } },
      },
      { id: 'query', type: 'complete' },
    ]);
    expect(await socket.settled('mutation')).toEqual([
      { id: 'mutation', type: 'next', payload: { data: { setDogfoodLiveMode: { dogfoodLiveMode: true } } } },
      { id: 'mutation', type: 'complete' },
    ]);
    const [syntax] = await socket.settled('syntax');
    expect(syntax).toMatchObject({
      type: 'error',
      payload: [{ message: expect.stringContaining('Syntax Error') }],
    });
    const [invalid] = await socket.settled('invalid');
    expect(invalid).toMatchObject({
      type: 'error',
      payload: [{ message: 'Cannot query field "nope" on type "Viewer".' }],
    });

    const eventId = randomUUID();
    await t.app.services.bus.publish({
      eventId,
      type: 'DOGFOOD_AGENT_PAUSED',
      tenantId: chairman.tenantId,
      payload: { event_id: eventId, role: 'cfo', tenant_id: chairman.tenantId },
    });
    expect(await nextEvent(socket, 'live')).toEqual({
      id: 'live',
      type: 'next',
      payload: { data: { agentPaused: { eventId, role: 'cfo' } } },
    });
    expect(socket.socket.readyState).toBe(socket.socket.OPEN);
    await socket.close();
  });

  it('runs a query and a mutation in the socket’s request: no second HTTP request, no second verification', async () => {
    const chairman = await t.caller(['chairman']);
    const socket = await openSocket(server.url, chairman);
    const fetch = vi.spyOn(t.app.yoga, 'fetch');
    const verify = vi.spyOn(t.app.services.tokens, 'verify');
    try {
      socket.subscribe('query', 'query Me { me { sub } }');
      socket.subscribe('mutation', 'mutation { setDogfoodLiveMode(enabled: false) { dogfoodLiveMode } }');
      expect(await socket.settled('query')).toEqual([
        { id: 'query', type: 'next', payload: { data: { me: { sub: chairman.sub } } } },
        { id: 'query', type: 'complete' },
      ]);
      expect(await socket.settled('mutation')).toEqual([
        {
          id: 'mutation',
          type: 'next',
          payload: { data: { setDogfoodLiveMode: { dogfoodLiveMode: false } } },
        },
        { id: 'mutation', type: 'complete' },
      ]);
      expect(fetch).not.toHaveBeenCalled();
      expect(verify).not.toHaveBeenCalled();
    } finally {
      fetch.mockRestore();
      verify.mockRestore();
      await socket.close();
    }
  });

  it('answers a cached query, and answers it again from the cache', async () => {
    const chairman = await t.caller(['chairman']);
    const socket = await openSocket(server.url, chairman);
    const vitals = '{ agentVitals(role: "ceo") { agentRole } }';
    socket.subscribe('first', vitals);
    expect(await socket.settled('first')).toEqual([
      { id: 'first', type: 'next', payload: { data: { agentVitals: { agentRole: 'ceo' } } } },
      { id: 'first', type: 'complete' },
    ]);
    socket.subscribe('second', vitals);
    expect(await socket.settled('second')).toEqual([
      { id: 'second', type: 'next', payload: { data: { agentVitals: { agentRole: 'ceo' } } } },
      { id: 'second', type: 'complete' },
    ]);
    await socket.close();
  });

  it('answers a resolver error of a query as a result with errors, then complete', async () => {
    const member = await t.caller(['member']);
    const socket = await openSocket(server.url, member);
    socket.subscribe('forbidden', 'mutation { setDogfoodLiveMode(enabled: true) { dogfoodLiveMode } }');
    const [result, complete] = await socket.settled('forbidden');
    expect(result).toMatchObject({
      type: 'next',
      payload: { data: null, errors: [{ extensions: { code: 'FORBIDDEN' } }] },
    });
    expect(complete).toEqual({ id: 'forbidden', type: 'complete' });
    await socket.close();
  });

  it('turns an unexpected failure while preparing an operation into an error for its id only', async () => {
    const { socket } = await socketWithLiveSubscription();
    const spy = vi.spyOn(t.app.yoga, 'getEnveloped').mockImplementationOnce(() => {
      throw new Error('database exploded');
    });
    socket.subscribe('broken', '{ me { sub } }');
    const messages = await socket.settled('broken');
    spy.mockRestore();
    expect(messages).toEqual([{ id: 'broken', type: 'error', payload: [{ message: 'Unexpected error.' }] }]);
    socket.subscribe('after', '{ me { sub } }');
    expect((await socket.settled('after')).map((message) => message.type)).toEqual(['next', 'complete']);
    await socket.close();
  });

  it('logs the connection and each operation with request id, tenant, name, type and outcome, never the token', async () => {
    const info = vi.spyOn(t.app.services.logger, 'info');
    const member = await t.caller(['member']);
    const socket = await openSocket(server.url, member);
    socket.subscribe('query', 'query Me { me { sub } }');
    socket.subscribe('invalid', '{ nope }');
    await socket.settled('query');
    await socket.settled('invalid');
    await socket.close();
    const lines = info.mock.calls.filter(([fields]) => JSON.stringify(fields).includes(member.tenantId));
    info.mockRestore();

    expect(lines).toContainEqual([
      { connectionId: expect.any(String), tenantId: member.tenantId },
      'websocket connected',
    ]);
    expect(lines).toContainEqual([
      expect.objectContaining({
        requestId: expect.any(String),
        tenantId: member.tenantId,
        operation: 'Me',
        operationType: 'query',
        outcome: 'ok',
      }),
      'websocket operation',
    ]);
    expect(lines).toContainEqual([
      expect.objectContaining({
        tenantId: member.tenantId,
        outcome: 'error',
        code: 'GRAPHQL_VALIDATION_FAILED',
      }),
      'websocket operation',
    ]);
    expect(JSON.stringify(info.mock.calls)).not.toContain(member.token);
  });
});
