import { afterEach, describe, expect, it, vi } from 'vitest';
import type { RunningServer } from '../../src/server.js';
import type { TestApp } from '../support/app.js';
import { afterEveryExpiry, serveTestApp, shortLivedMember } from '../support/fixtures.js';
import {
  closeCodeFor,
  OnAgentPaused,
  openSocket,
  publishAgentPaused,
  untilDelivered,
} from '../support/ws.js';

let t: TestApp;
let server: RunningServer;
serveTestApp((app) => ({ t, server } = app));
afterEach(() => {
  vi.restoreAllMocks();
});

describe('a token that expires while its socket is open', () => {
  it('closes the socket with 4401 at the token’s exp', async () => {
    const caller = await shortLivedMember('5s');
    const socket = await openSocket(server.url, caller);
    socket.subscribe('live', OnAgentPaused);
    await untilDelivered(t, socket, 'live', caller.tenantId);

    expect(await socket.closed(15_000)).toBe(4401);
  });

  it('delivers no event once the token has expired, even before its timer fires', async () => {
    const caller = await t.caller(['member']);
    const socket = await openSocket(server.url, caller);
    socket.subscribe('live', OnAgentPaused);
    await untilDelivered(t, socket, 'live', caller.tenantId);

    afterEveryExpiry();
    await publishAgentPaused(t, caller.tenantId, 'cfo');

    expect(await socket.closed()).toBe(4401);
    const roles = socket.received('live').map((message) => message.payload?.data?.agentPaused?.role);
    expect(roles).not.toContain('cfo');
  });

  it('closes with 4401, never 4500, on a subscribe sent after the expiry', async () => {
    const caller = await t.caller(['member']);
    const socket = await openSocket(server.url, caller);

    afterEveryExpiry();
    socket.subscribe('late', OnAgentPaused);

    expect(await socket.closed()).toBe(4401);
    expect(socket.received('late')).toEqual([]);
  });
});

describe('the token of a socket', () => {
  it('is verified once, at connection_init, and serves every operation of the socket', async () => {
    const chairman = await t.caller(['chairman']);
    const verify = vi.spyOn(t.app.services.tokens, 'verify');
    const socket = await openSocket(server.url, chairman);
    socket.subscribe('live', OnAgentPaused);
    await untilDelivered(t, socket, 'live', chairman.tenantId);
    socket.subscribe('query', '{ me { sub } }');
    socket.subscribe('mutation', 'mutation { setDogfoodLiveMode(enabled: true) { dogfoodLiveMode } }');

    expect((await socket.settled('query'))[0]).toMatchObject({
      payload: { data: { me: { sub: chairman.sub } } },
    });
    expect((await socket.settled('mutation'))[0]).toMatchObject({
      payload: { data: { setDogfoodLiveMode: { dogfoodLiveMode: true } } },
    });
    expect(verify).toHaveBeenCalledTimes(1);
    await socket.close();
  });

  it('closes with 1011, not 4401, when a valid token cannot be checked for an internal reason', async () => {
    const member = await t.caller(['member']);
    vi.spyOn(t.app.services.tenants, 'ensure').mockRejectedValueOnce(new Error('database unavailable'));
    expect(await closeCodeFor(server.url, { authorization: `Bearer ${member.token}` })).toBe(1011);
  });
});
