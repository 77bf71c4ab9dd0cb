import { describe, expect, it } from 'vitest';
import type { RunningServer } from '../../src/server.js';
import type { TestApp } from '../support/app.js';
import { afterEveryExpiry, serveTestApp, shortLivedMember } from '../support/fixtures.js';
import { nextSseEvent, openSse, untilSseDelivered } from '../support/sse.js';
import { OnAgentPaused, publishAgentPaused } from '../support/ws.js';

let t: TestApp;
let server: RunningServer;
serveTestApp((app) => ({ t, server } = app));

/** Resolves once the clock has passed `at` (the wait is for time itself: the token's exp). */
function clockPast(at: number): Promise<void> {
  return new Promise((resolve) => {
    const check = () => (Date.now() > at ? resolve() : setTimeout(check, at - Date.now() + 1));
    check();
  });
}

const expiredEvent = {
  event: 'next',
  data: {
    errors: [
      {
        message: 'Token has expired',
        extensions: { code: 'UNAUTHENTICATED' },
      },
    ],
  },
};

describe('a token that expires while its SSE subscription is open', () => {
  it('ends the stream at the token’s exp with an UNAUTHENTICATED event, then complete', async () => {
    const caller = await shortLivedMember('2s');
    const stream = await openSse(server.url, caller, OnAgentPaused);
    expect(stream.status).toBe(200);
    await untilSseDelivered(t, stream, caller.tenantId);

    expect(await nextSseEvent(stream, 10_000)).toMatchObject(expiredEvent);
    expect(await stream.next()).toEqual({ event: 'complete', data: null });
    await stream.ended();
    expect(Date.now()).toBeGreaterThanOrEqual(caller.expiresAt);
  });

  it('never delivers an event published after the exp', async () => {
    const caller = await shortLivedMember('2s');
    const stream = await openSse(server.url, caller, OnAgentPaused);
    await untilSseDelivered(t, stream, caller.tenantId);

    await clockPast(caller.expiresAt);
    await publishAgentPaused(t, caller.tenantId, 'cfo');

    expect(await nextSseEvent(stream)).toMatchObject(expiredEvent);
    await stream.ended();
    const roles = stream.received().map((message) => message.data?.data?.agentPaused?.role);
    expect(roles).not.toContain('cfo');
  });

  it('delivers no event once the token has expired, even before its timer fires', async () => {
    const caller = await t.caller(['member']);
    const stream = await openSse(server.url, caller, OnAgentPaused);
    await untilSseDelivered(t, stream, caller.tenantId);

    afterEveryExpiry();
    await publishAgentPaused(t, caller.tenantId, 'cfo');

    expect(await nextSseEvent(stream)).toMatchObject(expiredEvent);
    await stream.ended();
    const roles = stream.received().map((message) => message.data?.data?.agentPaused?.role);
    expect(roles).not.toContain('cfo');
  });
});
