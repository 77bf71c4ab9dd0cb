import { randomUUID } from 'node:crypto';
import { connect, type Socket } from 'node:net';
import { describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../support/app.js';
import { listen, openSocket, untilDelivered } from '../support/ws.js';

/** Shuts the server down; resolves with 'closed', or 'still closing' after `limitMs` (well past the deadline). */
async function closeWithin(close: () => Promise<void>, limitMs: number): Promise<string> {
  let timer: NodeJS.Timeout | undefined;
  const outcome = await Promise.race([
    close().then(() => 'closed'),
    new Promise<string>((resolve) => {
      timer = setTimeout(resolve, limitMs, 'still closing');
    }),
  ]);
  clearTimeout(timer);
  return outcome;
}

/** A raw HTTP/1.1 connection; `received` resolves once `pattern` has arrived. */
async function rawHttp(url: string) {
  const { hostname, port } = new URL(url);
  const socket: Socket = connect(Number(port), hostname);
  await new Promise<void>((resolve, reject) => {
    socket.once('connect', resolve);
    socket.once('error', reject);
  });
  socket.on('error', () => {});
  let data = '';
  const waiters = new Set<() => void>();
  socket.on('data', (chunk: Buffer) => {
    data += chunk.toString('latin1');
    for (const waiter of waiters) waiter();
  });
  const ended = new Promise<void>((resolve) => socket.once('close', () => resolve()));
  return {
    socket,
    ended,
    received: (pattern: RegExp) =>
      new Promise<void>((resolve) => {
        const check = () => {
          if (pattern.test(data)) {
            waiters.delete(check);
            resolve();
          }
        };
        waiters.add(check);
        check();
      }),
  };
}

const OnAgentPaused = `subscription { agentPaused { eventId role } }`;

describe('shutdown with open sockets', () => {
  it('sends 1001 and cuts a client that never answers the close frame, within SHUTDOWN_TIMEOUT_MS', async () => {
    const t = await createTestApp({ env: { SHUTDOWN_TIMEOUT_MS: '2000' } });
    const server = await listen(t);
    const member = await t.caller(['member']);
    const socket = await openSocket(server.url, member);
    // A frozen client: it reads nothing, so it never sees the close frame nor answers it.
    socket.socket.pause();

    // ws itself would wait 30 s for the answer.
    expect(await closeWithin(() => server.close(), 10_000)).toBe('closed');

    socket.socket.resume();
    expect(await socket.closed()).toBe(1001);
    await t.close();
  });

  it('ends within SHUTDOWN_TIMEOUT_MS with frozen HTTP keep-alive clients and a frozen subscriber behind a backlog', async () => {
    const t: TestApp = await createTestApp({ env: { SHUTDOWN_TIMEOUT_MS: '2000' } });
    const server = await listen(t);
    const member = await t.caller(['member']);

    // An idle keep-alive connection whose client stopped reading after its first response.
    const idle = await rawHttp(server.url);
    idle.socket.write('GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: keep-alive\r\n\r\n');
    await idle.received(/"status":"ok"/);
    idle.socket.pause();
    // A client that sent half a request body and froze: the request stays in flight.
    const halfway = await rawHttp(server.url);
    halfway.socket.write(
      'POST /graphql HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n' +
        `Authorization: Bearer ${member.token}\r\nContent-Length: 1000\r\n\r\n{"query":`,
    );
    halfway.socket.pause();
    // A graphql-ws subscriber that stopped reading while events pile up on its socket.
    const subscriber = await openSocket(server.url, member);
    subscriber.subscribe('live', OnAgentPaused);
    await untilDelivered(t, subscriber, 'live', member.tenantId);
    subscriber.socket.pause();
    const role = 'x'.repeat(16_000);
    for (let i = 0; i < 400; i += 1) {
      const eventId = randomUUID();
      await t.app.services.bus.publish({
        eventId,
        type: 'DOGFOOD_AGENT_PAUSED',
        tenantId: member.tenantId,
        payload: { event_id: eventId, role, tenant_id: member.tenantId },
      });
    }

    const started = performance.now();
    expect(await closeWithin(() => server.close(), 10_000)).toBe('closed');
    // The deadline, plus what the event loop needs to run the cut on a busy machine.
    expect(performance.now() - started).toBeLessThan(2000 + 2000);

    // Every one of them was let go: the idle one at once, the others at the deadline.
    for (const client of [idle, halfway]) {
      client.socket.resume();
      await client.ended;
    }
    subscriber.socket.resume();
    await subscriber.closed();
    await t.close();
  });
});
