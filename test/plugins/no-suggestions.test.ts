import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunningServer } from '../../src/server.js';
import { type Caller, createTestApp, type TestApp } from '../support/app.js';
import { openSse } from '../support/sse.js';
import { listen, openSocket } from '../support/ws.js';

/** Each mistake, and the message it gets without its "Did you mean …?". */
const mistakes = [
  {
    name: 'a field',
    query: '{ me { su } }',
    message: 'Cannot query field "su" on type "Viewer".',
  },
  {
    name: 'an argument',
    query: '{ agentVitals(role: "cfo", rol: "cfo") { agentRole } }',
    message: 'Unknown argument "rol" on field "Query.agentVitals".',
  },
  {
    name: 'a type',
    query: 'query Vitals($role: Strin!) { agentVitals(role: $role) { agentRole } }',
    message: 'Unknown type "Strin".',
  },
  {
    name: 'an enum value in the document',
    query: '{ abTests(status: runing) { nodes { id } } }',
    message: 'Value "runing" does not exist in "AbTestStatus" enum.',
  },
  {
    name: 'an input field in the document',
    query: 'mutation { pauseAgent(role: "cfo", input: { actorUserId: "x", reasn: "y" }) { eventId } }',
    message: 'Field "reasn" is not defined by type "PauseInput".',
  },
  {
    name: 'an enum value in a variable',
    query: 'query Tests($status: AbTestStatus) { abTests(status: $status) { nodes { id } } }',
    variables: { status: 'runing' },
    message:
      'Variable "$status" got invalid value "runing"; Value "runing" does not exist in "AbTestStatus" enum.',
  },
  {
    name: 'an input field in a variable',
    query: 'mutation Pause($input: PauseInput!) { pauseAgent(role: "cfo", input: $input) { eventId } }',
    variables: { input: { actorUserId: 'x', reasn: 'y' } },
    message:
      'Variable "$input" got invalid value { actorUserId: "x", reasn: "y" }; Field "reasn" is not defined by type "PauseInput".',
  },
];

/** A subscription mistaken in the document (validation) and one mistaken in a variable (coercion). */
const subscriptionMistakes = [
  {
    name: 'a subscription field',
    query: 'subscription { agentPause { eventId } }',
    message: 'Cannot query field "agentPause" on type "Subscription".',
  },
  {
    name: 'an enum value in a subscription variable',
    query: 'subscription Feed($types: [EventType!]) { events(types: $types) { __typename } }',
    variables: { types: ['DOGFOOD_AGENT_PAUSE'] },
    message:
      'Variable "$types" got invalid value "DOGFOOD_AGENT_PAUSE" at "types[0]"; Value "DOGFOOD_AGENT_PAUSE" does not exist in "EventType" enum.',
  },
];

const messagesOf = (errors: readonly { message: string }[] | undefined) =>
  (errors ?? []).map((error) => error.message);

describe('in production', () => {
  let t: TestApp;
  let server: RunningServer;
  let chairman: Caller;
  beforeAll(async () => {
    t = await createTestApp({ env: { NODE_ENV: 'production' } });
    server = await listen(t);
    chairman = await t.caller(['chairman']);
  });
  afterAll(async () => {
    await server.close();
    await t.close();
  });

  it.each(mistakes)('suggests no name for $name over HTTP', async ({ query, variables, message }) => {
    const { errors } = await t.graphql(query, variables, chairman);
    expect(messagesOf(errors)).toEqual([message]);
  });

  it.each(subscriptionMistakes)(
    'suggests no name for $name over SSE',
    async ({ query, variables, message }) => {
      const stream = await openSse(server.url, chairman, query, variables);
      await stream.ended();
      expect(stream.received().flatMap((event) => messagesOf(event.data?.errors))).toEqual([message]);
    },
  );

  it.each([...mistakes, ...subscriptionMistakes])(
    'suggests no name for $name over graphql-ws',
    async ({ query, variables, message }) => {
      const socket = await openSocket(server.url, chairman);
      socket.subscribe('mistake', query, variables);
      const messages = await socket.settled('mistake');
      const errors = messages.flatMap((received) =>
        received.type === 'error' ? received.payload : (received.payload?.errors ?? []),
      );
      expect(messagesOf(errors)).toEqual([message]);
      await socket.close();
    },
  );
});

describe('in development', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp();
  });
  afterAll(() => t.close());

  it('still suggests names, as graphql-js does', async () => {
    const { errors } = await t.graphql('{ me { su } }', {}, await t.caller(['member']));
    expect(messagesOf(errors)).toEqual(['Cannot query field "su" on type "Viewer". Did you mean "sub"?']);
  });
});
