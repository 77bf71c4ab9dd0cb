import { describe, expect, it } from 'vitest';
import { createTestApp } from '../support/app.js';
import { listen, openSocket } from '../support/ws.js';

describe('shutdown with open sockets', () => {
  it('sends 1001 and cuts a client that never answers the close frame, within SHUTDOWN_TIMEOUT_MS', async () => {
    const t = await createTestApp({ env: { SHUTDOWN_TIMEOUT_MS: '2000' } });
    const server = await listen(t);
    const member = await t.caller(['member']);
    const socket = await openSocket(server.url, member);
    // A frozen client: it reads nothing, so it never sees the close frame nor answers it.
    socket.socket.pause();

    let timer: NodeJS.Timeout | undefined;
    const outcome = await Promise.race([
      server.close().then(() => 'closed'),
      // ws itself would wait 30 s for the answer.
      new Promise((resolve) => {
        timer = setTimeout(resolve, 10_000, 'still closing');
      }),
    ]);
    clearTimeout(timer);
    expect(outcome).toBe('closed');

    socket.socket.resume();
    expect(await socket.closed()).toBe(1001);
    await t.close();
  });
});
