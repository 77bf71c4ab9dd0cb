import { afterAll, beforeAll } from 'vitest';
import type { RunningServer } from '../../src/server.js';
import { createTestApp, type TestApp, type TestAppOptions } from './app.js';
import { listen } from './ws.js';

// Set-ups many files share, registered as hooks of the file (or describe block) that calls them.

/**
 * A test app for the tests of the block that calls this: made before them, closed after them. `ready`
 * receives it first, to set the block's variables and make what its tests share.
 */
export function withTestApp(ready: (t: TestApp) => unknown, options: TestAppOptions = {}): void {
  let t: TestApp | undefined;
  beforeAll(async () => {
    t = await createTestApp(options);
    await ready(t);
  });
  afterAll(() => t?.close());
}

export interface ListeningApp {
  t: TestApp;
  /** `t` served on an ephemeral loopback port (WebSocket, SSE, MCP and browser tests need a real socket). */
  server: RunningServer;
}

/**
 * A test app served on an ephemeral port for the tests of the block that calls this: made before them,
 * its server and then the app closed after them. `ready` receives both first, like withTestApp's.
 */
export function serveTestApp(ready: (app: ListeningApp) => unknown, options: TestAppOptions = {}): void {
  let t: TestApp | undefined;
  let server: RunningServer | undefined;
  beforeAll(async () => {
    t = await createTestApp(options);
    server = await listen(t);
    await ready({ t, server });
  });
  afterAll(async () => {
    await server?.close();
    await t?.close();
  });
}
