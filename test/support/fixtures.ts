import { randomUUID } from 'node:crypto';
import { Writable } from 'node:stream';
import { decodeJwt } from 'jose';
import pino from 'pino';
import { afterAll, beforeAll, onTestFinished, vi } from 'vitest';
import { signToken } from '../../src/auth/tokens.js';
import type { Role } from '../../src/auth/viewer.js';
import type { RunningServer } from '../../src/server.js';
import { type Caller, createTestApp, TEST_SECRET, type TestApp, type TestAppOptions } from './app.js';
import { createTestDatabase } from './database.js';
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

/** withTestApp, with a caller of `roles` of a fresh tenant, made once for the block's tests. */
export function withTestAppAndCaller(
  roles: Role[],
  ready: (made: { t: TestApp; caller: Caller }) => unknown,
  options: TestAppOptions = {},
): void {
  withTestApp(async (t) => ready({ t, caller: await t.caller(roles) }), options);
}

/** Two instances of the app on one database, each with its own relay, dispatcher and background passes. */
export interface TwoTestApps {
  a: TestApp;
  b: TestApp;
  /** Closes both instances, then drops their database. */
  close(): Promise<void>;
}

/** Two test apps with the same `options` on one fresh database. */
export async function createTwoTestApps(
  options: Omit<TestAppOptions, 'database'> = {},
): Promise<TwoTestApps> {
  const database = await createTestDatabase();
  const a = await createTestApp({ ...options, database });
  const b = await createTestApp({ ...options, database }).catch(async (error: unknown) => {
    await a.close();
    await database.drop();
    throw error;
  });
  return {
    a,
    b,
    async close() {
      await a.close();
      await b.close();
      await database.drop();
    },
  };
}

/** createTwoTestApps for the tests of the block that calls this: made before them, closed after them. */
export function withTwoTestApps(
  ready: (apps: TwoTestApps) => unknown,
  options: Omit<TestAppOptions, 'database'> = {},
): void {
  let apps: TwoTestApps | undefined;
  beforeAll(async () => {
    apps = await createTwoTestApps(options);
    await ready(apps);
  });
  afterAll(() => apps?.close());
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

/** serveTestApp, with a caller of `roles` of a fresh tenant, made once for the block's tests. */
export function serveTestAppAndCaller(
  roles: Role[],
  ready: (made: ListeningApp & { caller: Caller }) => unknown,
  options: TestAppOptions = {},
): void {
  serveTestApp(async (app) => ready({ ...app, caller: await app.t.caller(roles) }), options);
}

/** A member of a fresh tenant whose token expires after `ttl`, and when it does (ms since the epoch). */
export async function shortLivedMember(ttl: string): Promise<Caller & { expiresAt: number }> {
  const tenantId = randomUUID();
  const sub = `user-${randomUUID().slice(0, 8)}`;
  const token = await signToken(TEST_SECRET, { tenantId, sub, roles: ['member'], ttl });
  return { tenantId, sub, roles: ['member'], token, expiresAt: (decodeJwt(token).exp as number) * 1000 };
}

/** A logger at warn whose lines the test reads (pino writes synchronously to the stream). */
export function capturingLogger() {
  const lines: Record<string, unknown>[] = [];
  const destination = new Writable({
    write(chunk, _encoding, done) {
      for (const line of String(chunk).split('\n').filter(Boolean)) lines.push(JSON.parse(line));
      done();
    },
  });
  return { lines, logger: pino({ level: 'warn' }, destination) };
}

/** Moves the clock (Date.now) past the expiry of every token the test issued, until the test ends. */
export function afterEveryExpiry(): void {
  const now = Date.now();
  const clock = vi.spyOn(Date, 'now').mockReturnValue(now + 2 * 60 * 60 * 1000);
  onTestFinished(() => clock.mockRestore());
}
