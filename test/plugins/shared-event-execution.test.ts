import { EventEmitter, on } from 'node:events';
import { subscribe as executorSubscribe } from '@graphql-tools/executor';
import {
  type ExecutionResult,
  GraphQLInt,
  GraphQLNonNull,
  GraphQLObjectType,
  GraphQLSchema,
  GraphQLString,
} from 'graphql';
import { createYoga, isAsyncIterable } from 'graphql-yoga';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Role } from '../../src/auth/viewer.js';
import { useSharedEventExecution } from '../../src/plugins/use-shared-event-execution.js';

interface Tick {
  n: number;
}

let executions: number;
const ticks = new EventEmitter();

const schema = new GraphQLSchema({
  query: new GraphQLObjectType({
    name: 'Query',
    fields: { ok: { type: GraphQLString, resolve: () => 'ok' } },
  }),
  subscription: new GraphQLObjectType({
    name: 'Subscription',
    fields: {
      tick: {
        type: new GraphQLObjectType({
          name: 'Tick',
          fields: {
            n: { type: GraphQLInt },
            label: {
              type: GraphQLString,
              args: { prefix: { type: new GraphQLNonNull(GraphQLString) } },
              resolve: (tick: Tick, args: { prefix: string }) => {
                executions += 1;
                return `${args.prefix}${tick.n}`;
              },
            },
          },
        }),
        subscribe: async function* () {
          for await (const [tick] of on(ticks, 'tick')) yield tick as Tick;
        },
        resolve: (tick: Tick) => tick,
      },
    },
  }),
});

const yoga = createYoga({ schema, plugins: [useSharedEventExecution()] });
const DOCUMENT = 'subscription ($prefix: String!) { tick { n label(prefix: $prefix) } }';

function viewer(sub: string, roles: Role[] = ['member'], tenantId = 'tenant-a') {
  return { tenantId, sub, roles };
}

/** A subscription as the WebSocket transport opens it, through yoga's envelop. */
async function open(
  caller: ReturnType<typeof viewer> | null,
  variableValues: Record<string, unknown>,
  query = DOCUMENT,
) {
  const enveloped = yoga.getEnveloped({ viewer: caller });
  const result = await enveloped.subscribe({
    schema: enveloped.schema,
    document: enveloped.parse(query),
    variableValues,
    contextValue: await enveloped.contextFactory(),
  });
  return result as AsyncIterableIterator<ExecutionResult> | ExecutionResult;
}

async function stream(caller: ReturnType<typeof viewer> | null, variableValues: Record<string, unknown>) {
  const result = await open(caller, variableValues);
  if (!isAsyncIterable(result)) throw new Error(`no stream: ${JSON.stringify(result)}`);
  return result as AsyncIterableIterator<ExecutionResult>;
}

/** Emits one event object to every open subscription and reads the next result of each. */
async function publish(streams: AsyncIterableIterator<ExecutionResult>[], tick: Tick) {
  const next = streams.map((s) => s.next());
  // The subscriptions' generators start listening on their first `next`.
  await new Promise((resolve) => setImmediate(resolve));
  ticks.emit('tick', tick);
  return (await Promise.all(next)).map((step) => step.value);
}

beforeEach(() => {
  executions = 0;
});
// A failed test must not leave its subscriptions listening to the next one's events.
afterEach(() => {
  ticks.removeAllListeners();
});

describe('one execution per subscription event', () => {
  it('executes an event once for the subscriptions of one caller with the same document and variables', async () => {
    const streams = await Promise.all([1, 2, 3].map(() => stream(viewer('alice'), { prefix: '#' })));
    const results = await publish(streams, { n: 7 });
    expect(results).toEqual(Array(3).fill({ data: { tick: { n: 7, label: '#7' } } }));
    expect(executions).toBe(1);
    await Promise.all(streams.map((s) => s.return?.()));
  });

  it('executes an event apart for another subject, other roles, another tenant or other variables', async () => {
    const streams = await Promise.all([
      stream(viewer('alice'), { prefix: '#' }),
      stream(viewer('bob'), { prefix: '#' }),
      stream(viewer('alice', ['chairman']), { prefix: '#' }),
      stream(viewer('alice', ['member'], 'tenant-b'), { prefix: '#' }),
      stream(viewer('alice'), { prefix: 'n=' }),
    ]);
    const results = await publish(streams, { n: 1 });
    expect(results.map((result) => result?.data)).toEqual([
      { tick: { n: 1, label: '#1' } },
      { tick: { n: 1, label: '#1' } },
      { tick: { n: 1, label: '#1' } },
      { tick: { n: 1, label: '#1' } },
      { tick: { n: 1, label: 'n=1' } },
    ]);
    expect(executions).toBe(5);
    await Promise.all(streams.map((s) => s.return?.()));
  });

  it('executes each event object once: an equal event published again is executed again', async () => {
    const streams = await Promise.all([1, 2].map(() => stream(viewer('alice'), { prefix: '#' })));
    await publish(streams, { n: 1 });
    await publish(streams, { n: 1 });
    expect(executions).toBe(2);
    await Promise.all(streams.map((s) => s.return?.()));
  });

  it('answers bad variables as the executor answers them, without opening a stream', async () => {
    const document = yoga.getEnveloped().parse(DOCUMENT);
    const expected = await executorSubscribe({ schema, document, variableValues: {}, contextValue: {} });
    const result = await open(viewer('alice'), {});
    expect(isAsyncIterable(result)).toBe(false);
    expect(JSON.parse(JSON.stringify(result))).toEqual(JSON.parse(JSON.stringify(expected)));
    expect((result as ExecutionResult).errors?.[0]?.extensions?.code).toBe('BAD_USER_INPUT');
    expect(ticks.listenerCount('tick')).toBe(0);
  });

  it('leaves a subscription without a caller to the executor, executed on its own', async () => {
    const streams = await Promise.all([1, 2].map(() => stream(null, { prefix: '#' })));
    const results = await publish(streams, { n: 3 });
    expect(results).toEqual(Array(2).fill({ data: { tick: { n: 3, label: '#3' } } }));
    expect(executions).toBe(2);
    await Promise.all(streams.map((s) => s.return?.()));
  });

  it('stops listening to the source when the subscription is closed', async () => {
    const s = await stream(viewer('alice'), { prefix: '#' });
    await publish([s], { n: 1 });
    expect(ticks.listenerCount('tick')).toBe(1);
    await s.return?.();
    expect(ticks.listenerCount('tick')).toBe(0);
  });
});
