// A/B test fixtures, made through the GraphQL API, and the scale case: ingestion of many events through
// `recordAbTestEvents` into one test, then its results read back and checked against what was sent.
import type { LoadResult } from './load.js';
import { type LoadClient, median } from './measure.js';
import { cpuSeconds } from './processes.js';
import { type Caller, type Gateway, graphqlRequest, mintCaller, restRequest } from './servers.js';

export const RECORD_EVENTS = `mutation BenchRecordEvents($testId: ID!, $events: [AbTestEventInput!]!) {
  recordAbTestEvents(testId: $testId, events: $events) { newObservations }
}`;

/** The most events one call accepts (MAX_EVENTS_PER_CALL). */
export const EVENTS_PER_CALL = 1000;

/** A running two-variant test of the caller's tenant; its id. */
export async function runningAbTest(gateway: Gateway, caller: Caller): Promise<string> {
  const { createAbTest } = await graphqlRequest<{ createAbTest: { id: string } }>(
    gateway,
    caller,
    'mutation ($input: CreateAbTestInput!) { createAbTest(input: $input) { id } }',
    { input: { name: `bench ${Date.now()}`, variants: [{ name: 'control' }, { name: 'guided tour' }] } },
  );
  await graphqlRequest(gateway, caller, 'mutation ($id: ID!) { startAbTest(id: $id) { id } }', {
    id: createAbTest.id,
  });
  return createAbTest.id;
}

/** Records `calls` batches of new subjects (every fifth converts), a few calls at a time. */
export async function recordSubjects(
  client: LoadClient,
  gateway: Gateway,
  caller: Caller,
  testId: string,
  calls: number,
  firstCall = 0,
): Promise<LoadResult> {
  return client.run({
    url: `${gateway.url}/graphql`,
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${caller.token}` },
    connections: Math.min(4, calls),
    amount: calls,
    abEvents: { query: RECORD_EVENTS, testId, perCall: EVENTS_PER_CALL, firstCall },
  });
}

interface Results {
  variants: { observations: number; successes: number }[];
}

export interface IngestionFigures {
  events: number;
  eventsPerSecond: number;
  /** Events per second of the first and the last tenth of the events. */
  firstTenthPerSecond: number;
  lastTenthPerSecond: number;
  p99MsPerCall: number;
  cpuMsPerThousandEvents: number;
  /** Results read back: observations and successes summed over the variants. */
  observed: { observations: number; successes: number };
  /** Results of the full test read by one client for `seconds`: per-request latency. */
  resultsOneClient: { p50Ms: number; p99Ms: number; perSecond: number };
}

/**
 * Ingests `events` new subjects into one test through the API in tenths, timing each tenth, then reads
 * the results and checks that every event was counted. Throws when the counts disagree or a call failed.
 */
export async function measureIngestion(
  client: LoadClient,
  gateway: Gateway,
  events: number,
  seconds: number,
): Promise<IngestionFigures> {
  const caller = await mintCaller();
  const testId = await runningAbTest(gateway, caller);
  const calls = Math.max(10, Math.round(events / EVENTS_PER_CALL));
  const tenth = Math.round(calls / 10);
  const tenths: LoadResult[] = [];
  const cpuBefore = await cpuSeconds(gateway.pid);
  for (let part = 0; part < 10; part++) {
    const result = await recordSubjects(client, gateway, caller, testId, tenth, part * tenth);
    if (result.failures > 0) {
      throw new Error(`ingestion: ${result.failures} calls failed (${JSON.stringify(result.statusCodes)})`);
    }
    tenths.push(result);
  }
  const cpu = (await cpuSeconds(gateway.pid)) - cpuBefore;
  const sent = tenth * 10 * EVENTS_PER_CALL;
  const elapsed = tenths.reduce((sum, result) => sum + result.seconds, 0);
  const route = `/api/v1/ux/ab-tests/${testId}/results`;
  const results = (await restRequest(gateway, caller, 'GET', route, undefined, 200)) as Results;
  const observed = {
    observations: results.variants.reduce((sum, variant) => sum + variant.observations, 0),
    successes: results.variants.reduce((sum, variant) => sum + variant.successes, 0),
  };
  if (observed.observations !== sent || observed.successes !== sent / 5) {
    throw new Error(
      `ingestion: sent ${sent} events (${sent / 5} conversions), results count ${JSON.stringify(observed)}`,
    );
  }
  const oneClient = await client.run({
    url: `${gateway.url}${route}`,
    method: 'GET',
    headers: { authorization: `Bearer ${caller.token}` },
    connections: 1,
    seconds,
  });
  const rate = (result: LoadResult | undefined) =>
    result ? (result.requests * EVENTS_PER_CALL) / result.seconds : Number.NaN;
  return {
    events: sent,
    eventsPerSecond: sent / elapsed,
    firstTenthPerSecond: rate(tenths[0]),
    lastTenthPerSecond: rate(tenths.at(-1)),
    p99MsPerCall: median(tenths.map((result) => result.p99Ms)),
    cpuMsPerThousandEvents: (cpu * 1000) / (sent / 1000),
    observed,
    resultsOneClient: { p50Ms: oneClient.p50Ms, p99Ms: oneClient.p99Ms, perSecond: oneClient.perSecond },
  };
}
