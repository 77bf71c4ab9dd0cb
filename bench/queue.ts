// A queue that keeps up: 16 chat producers fill one role's queue with sendChatMessage while 32 agent
// runtimes (each its own agent token) drain it with claimTask + completeTask, all through the public
// GraphQL API of the built server (its own process), from this process. The role and the tenant have
// budgets, so every claim checks and reserves them and every completion settles them. Each round starts
// on a fresh tenant: the producers run alone for a moment to leave a backlog, then the runtimes join for
// the measured window; at its end the producers stop, each runtime completes what it holds, and the
// tenant's budgets are read back to check that spent is exactly the sum of the reported costs and that
// nothing stays reserved. Rounds alternate between the databases (interleaved), so a neighbour's load on
// the shared machine weighs on both.
import { randomUUID } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import { signToken } from '../src/auth/tokens.js';
import { median, percentile } from './measure.js';
import {
  type Caller,
  type DatabaseKind,
  type Gateway,
  jwtSecret,
  graphqlRequest as send,
} from './servers.js';

export const PRODUCERS = 16;
export const RUNTIMES = 32;
const ROLE = 'cfo';
/** Producers alone before the window: the backlog the runtimes start on. */
export const BACKLOG_MS = 500;
/** An empty claim waits this long before the next, as a polling runtime would. */
export const EMPTY_PAUSE_MS = 5;

const CHAT = `mutation ($role: String!) {
  sendChatMessage(role: $role, input: { message: "Close the books", persistThread: false }) { taskId }
}`;
const CLAIM = `mutation ($role: String!) { claimTask(role: $role) { id } }`;
const COMPLETE = `mutation ($id: ID!, $cost: Float!) {
  completeTask(id: $id, input: { tokensUsed: 10, costUsd: $cost }) { id }
}`;
const SET_BUDGET = `mutation ($input: SetBudgetInput!) { setBudget(input: $input) { id } }`;
const BUDGETS = `{ budgets { role spentUsd reservedUsd spentTokens } }`;

/** Requests answered 503 (the instance shed load): retried after a pause, as a runtime would. */
let refusals = 0;
const REFUSAL_PAUSE_MS = 50;

async function graphqlRequest<T>(
  gateway: Gateway,
  caller: Caller,
  query: string,
  variables: Record<string, unknown> = {},
): Promise<T> {
  for (;;) {
    try {
      return await send<T>(gateway, caller, query, variables);
    } catch (error) {
      if (!/answered 503/.test((error as Error).message)) throw error;
      refusals += 1;
      await new Promise((resolve) => setTimeout(resolve, REFUSAL_PAUSE_MS));
    }
  }
}

export interface QueueRound extends RoundCounts {
  database: DatabaseKind;
  round: number;
  /** Claims that found the queue empty (the runtimes caught up with the producers). */
  emptyClaims: number;
  /** Claims that handed out a task. */
  claimP50Ms: number;
  claimP99Ms: number;
  chatP50Ms: number;
  chatP99Ms: number;
  /** Requests the instance refused with 503 (shed load, or no pool connection in time), retried. */
  refusals: number;
  /** Spent equals the sum of the reported costs, to the micro-dollar, on the role's and the tenant's budget, and nothing stays reserved. */
  costsExact: boolean;
}

/** A decimal string of dollars in micro-dollars. */
function micros(usd: string): bigint {
  const [whole = '0', fraction = ''] = usd.split('.');
  return BigInt(whole) * 1_000_000n + BigInt(fraction.padEnd(6, '0').slice(0, 6) || '0');
}

async function caller(tenantId: string, sub: string, roles: string[]): Promise<Caller> {
  return { tenantId, sub, token: await signToken(jwtSecret, { tenantId, sub, roles, ttl: '6h' }) };
}

/** One round against `gateway`, on a tenant of its own. */
export async function queueRound(gateway: Gateway, round: number, seconds: number): Promise<QueueRound> {
  const tenantId = randomUUID();
  refusals = 0;
  const chairman = await caller(tenantId, 'bench-chairman', ['chairman', 'member']);
  const producers = await Promise.all(
    Array.from({ length: PRODUCERS }, (_, i) => caller(tenantId, `bench-producer-${i}`, ['member'])),
  );
  const runtimes = await Promise.all(
    Array.from({ length: RUNTIMES }, (_, i) => caller(tenantId, `bench-runtime-${i}`, ['agent'])),
  );
  for (const role of [ROLE, undefined]) {
    await graphqlRequest(gateway, chairman, SET_BUDGET, {
      input: { role, period: 'month', limitUsd: '1000000', estimateUsd: '0.05' },
    });
  }
  let costMicros = 0n;
  const measured = await fillAndDrain({
    producers: producers.length,
    workers: runtimes.length,
    seconds,
    send: (index) => graphqlRequest(gateway, producers[index] as Caller, CHAT, { role: ROLE }),
    async take(index) {
      const { claimTask } = await graphqlRequest<{ claimTask: { id: string } | null }>(
        gateway,
        runtimes[index] as Caller,
        CLAIM,
        { role: ROLE },
      );
      return claimTask?.id ?? null;
    },
    async finish(index, id, cost) {
      await graphqlRequest(gateway, runtimes[index] as Caller, COMPLETE, { id, cost: cost / 1e6 });
      costMicros += BigInt(cost);
    },
  });
  const { budgets } = await graphqlRequest<{
    budgets: { role: string | null; spentUsd: string; reservedUsd: string }[];
  }>(gateway, chairman, BUDGETS);
  const costsExact =
    budgets.length === 2 &&
    budgets.every((budget) => micros(budget.spentUsd) === costMicros && micros(budget.reservedUsd) === 0n);
  const { takeMs, sendMs, emptyTakes, ...counts } = measured;
  return {
    database: gateway.database,
    round,
    ...counts,
    emptyClaims: emptyTakes,
    claimP50Ms: median(takeMs),
    claimP99Ms: percentile(takeMs, 99),
    chatP50Ms: median(sendMs),
    chatP99Ms: percentile(sendMs, 99),
    refusals,
    costsExact,
  };
}

/** What a round counted over its measured window, whichever queue it ran on. */
export type RoundCounts = Omit<FillAndDrain, 'emptyTakes' | 'takeMs' | 'sendMs'>;

/** What a fill-and-drain round counted and timed, over its measured window. */
export interface FillAndDrain {
  seconds: number;
  /** Items waiting when the workers started. */
  backlog: number;
  filled: number;
  drained: number;
  fillPerSecond: number;
  drainPerSecond: number;
  drainToFill: number;
  /** Takes that found the queue empty. */
  emptyTakes: number;
  /** Takes that handed out an item, and sends that ended within the window, in ms. */
  takeMs: number[];
  sendMs: number[];
  /** Item ids handed out more than once. */
  duplicates: number;
}

export interface FillAndDrainOptions {
  producers: number;
  workers: number;
  seconds: number;
  /** Puts one item on the queue. */
  send(producer: number): Promise<void>;
  /** Takes one item: its id, or null when the queue is empty. */
  take(worker: number): Promise<string | null>;
  /** Completes an item with a cost of its own, in micro-dollars (1 to 99,999). */
  finish(worker: number, id: string, costMicros: number): Promise<void>;
}

/**
 * The shape of a queue round, the gateway's and its reference's alike: the producers send alone for
 * BACKLOG_MS, then the workers take one item at a time and finish it for `seconds` (an empty take pausing
 * EMPTY_PAUSE_MS, as a polling runtime would); at the end the producers stop and each worker finishes what
 * it holds.
 */
export async function fillAndDrain({
  producers,
  workers,
  seconds,
  send,
  take,
  finish,
}: FillAndDrainOptions): Promise<FillAndDrain> {
  let producing = true;
  let draining = true;
  let windowStarted = 0;
  let windowEnded = 0;
  let filledBefore = 0;
  let filledInWindow = 0;
  let drainedInWindow = 0;
  let emptyTakes = 0;
  const sendMs: number[] = [];
  const takeMs: number[] = [];
  const seen = new Set<string>();
  let duplicates = 0;
  const produce = async (index: number) => {
    while (producing) {
      const started = performance.now();
      await send(index);
      const ended = performance.now();
      if (windowStarted === 0) filledBefore += 1;
      else if (windowEnded === 0 || ended <= windowEnded) {
        filledInWindow += 1;
        sendMs.push(ended - started);
      }
    }
  };
  const drain = async (index: number) => {
    let n = 0;
    while (draining) {
      const started = performance.now();
      const id = await take(index);
      const taken = performance.now();
      if (id === null) {
        emptyTakes += 1;
        await new Promise((resolve) => setTimeout(resolve, EMPTY_PAUSE_MS));
        continue;
      }
      takeMs.push(taken - started);
      if (seen.has(id)) duplicates += 1;
      seen.add(id);
      n += 1;
      await finish(index, id, ((index * 7919 + n * 104729) % 99_999) + 1);
      if (windowEnded === 0 || performance.now() <= windowEnded) drainedInWindow += 1;
    }
  };
  const producing$ = Promise.all(Array.from({ length: producers }, (_, i) => produce(i)));
  await new Promise((resolve) => setTimeout(resolve, BACKLOG_MS));
  windowStarted = performance.now();
  const backlog = filledBefore;
  const draining$ = Promise.all(Array.from({ length: workers }, (_, i) => drain(i)));
  await new Promise((resolve) => setTimeout(resolve, seconds * 1000));
  windowEnded = performance.now();
  producing = false;
  draining = false;
  await Promise.all([producing$, draining$]);
  const window = (windowEnded - windowStarted) / 1000;
  return {
    seconds: window,
    backlog,
    filled: filledInWindow,
    drained: drainedInWindow,
    fillPerSecond: filledInWindow / window,
    drainPerSecond: drainedInWindow / window,
    drainToFill: drainedInWindow / filledInWindow,
    emptyTakes,
    takeMs,
    sendMs,
    duplicates,
  };
}
