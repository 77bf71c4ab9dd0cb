import { once } from 'node:events';
import type { Duplex } from 'node:stream';
import type { TypedDocumentNode } from '@graphql-typed-document-node/core';
import { parse } from 'graphql';
import { describe, expect, it } from 'vitest';
import type { RunningServer } from '../../src/server.js';
import type { Caller, TestApp } from '../support/app.js';
import { eventually } from '../support/eventually.js';
import { serveTestAppAndCaller } from '../support/fixtures.js';
import { subscribe } from '../support/ws.js';
import { parseMetrics, sampleValue, scrape } from './metrics-support.js';

const TaskUpdated = parse(
  'subscription TaskFeed { taskUpdated(role: "cfo") { taskId } }',
) as TypedDocumentNode<unknown, Record<string, never>>;

let t: TestApp;
let server: RunningServer;
let member: Caller;

serveTestAppAndCaller(['member'], (made) => ({ t, server, caller: member } = made));

async function gauges() {
  const samples = parseMetrics((await scrape(t)).text);
  return {
    connections: sampleValue(samples, 'boardroom_websocket_connections_active'),
    subscriptions: sampleValue(samples, 'boardroom_graphql_subscriptions_active'),
    started: sampleValue(samples, 'boardroom_graphql_operation_duration_seconds_count', {
      operation_name: 'other',
      operation_type: 'subscription',
      outcome: 'success',
    }),
  };
}

describe('WebSocket metrics', () => {
  it('count open connections and subscriptions, and drop them when the socket closes', async () => {
    // The server's end of the connection: its closing, not a clock, tells when the gauges must have dropped.
    const upgraded = once(server.server, 'upgrade') as Promise<[unknown, Duplex]>;
    const feed = await subscribe(server.url, member, TaskUpdated, {});
    const [, serverSide] = await upgraded;
    await eventually(async () =>
      expect(await gauges()).toEqual({ connections: 1, subscriptions: 1, started: 1 }),
    );

    const serverClosed = once(serverSide, 'close');
    await feed.close();
    await serverClosed;
    await eventually(async () =>
      expect(await gauges()).toEqual({ connections: 0, subscriptions: 0, started: 1 }),
    );
  });
});
