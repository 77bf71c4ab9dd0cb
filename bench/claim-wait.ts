// Wake-up latency of a waiting claim: an agent waits in claimNextTask(waitSeconds) on the built server (its
// own process) while this process sends a chat for the role; measured from the chat's response (its
// commit is done) to the claim's response carrying the task, one message at a time, with `idle` more
// claims waiting on another role of the tenant the whole time. On PostgreSQL with Redis the waiter and the
// chat go to two instances of one database, so the wake-up crosses the bus.
import { performance } from 'node:perf_hooks';
import { median, percentile } from './measure.js';
import { type DatabaseKind, type Gateway, graphqlRequest, mintCaller, startGateway } from './servers.js';

export interface ClaimWakeFigures {
  database: DatabaseKind;
  instances: 1 | 2;
  wakeUps: number;
  /** Other claims waiting (on another role) throughout. */
  idleWaiters: number;
  /** From the chat's response to the waiting claim's response. */
  medianMs: number;
  p99Ms: number;
  worstMs: number;
  /** The chat mutation itself, for scale. */
  chatMedianMs: number;
  /**
   * Idle claims answered 503 (the database budget full while they all arrive at once) and sent again after
   * 100 to 200 ms, as a runtime backs off.
   */
  idleRefusals: number;
}

const WAIT = `mutation ($role: String!) {
  claimNextTask(role: $role, waitSeconds: 30) { outcome task { id } }
}`;
const CHAT =
  'mutation { sendChatMessage(role: "cfo", input: { message: "Close the books", persistThread: false }) { taskId } }';
const COMPLETE = `mutation ($id: ID!) { completeTask(id: $id, input: { tokensUsed: 1, costUsd: 0 }) { id } }`;
/** Head start of a waiting claim before the chat: the claim must be waiting, not racing the chat. */
const HEAD_START_MS = 25;

type Claim = { claimNextTask: { outcome: string; task: { id: string } | null } };

export async function measureClaimWake(
  database: DatabaseKind,
  runDir: string,
  postgresUrl: string,
  redisUrl: string | undefined,
  wakeUps: number,
  idleWaiters: number,
): Promise<ClaimWakeFigures> {
  const instances = database === 'postgres' && redisUrl ? 2 : 1;
  const a: Gateway = await startGateway({
    name: `claim-wait-${database}-a`,
    database,
    runDir,
    postgresUrl,
    redisUrl: instances === 2 ? redisUrl : undefined,
  });
  const b: Gateway =
    instances === 2
      ? await startGateway({
          name: `claim-wait-${database}-b`,
          database,
          runDir,
          postgresUrl,
          redisUrl,
          reuse: { databaseUrl: a.databaseUrl },
        })
      : a;
  let idle = true;
  let idleFailure: unknown;
  const idleLoops: Promise<void>[] = [];
  let idleRefusals = 0;
  try {
    const caller = await mintCaller(['member', 'agent']);
    // The tenant exists before its agents connect (its first request creates it, and requests that arrive
    // meanwhile wait for that, holding their place in the database budget).
    await graphqlRequest(b, caller, 'mutation { claimNextTask(role: "cto") { outcome } }');
    // Idle waiters on another role, all sent at once: re-issued when their 30 s ends, until the measurement
    // is over. (Claims that start waiting together share one attempt; a 503 is counted and sent again.)
    for (let index = 0; index < idleWaiters; index += 1) {
      idleLoops.push(
        (async () => {
          while (idle) {
            try {
              await graphqlRequest<Claim>(b, caller, WAIT, { role: 'cto' });
            } catch (error) {
              if (!idle || !/ answered 503:/.test((error as Error).message)) throw error;
              idleRefusals += 1;
              await new Promise((resolve) => setTimeout(resolve, 100 + Math.random() * 100));
            }
          }
        })().catch((error: unknown) => {
          // Stopping the gateways ends the idle claims; a failure before that is the bench's.
          if (idle) idleFailure ??= error;
        }),
      );
    }
    // Until every idle claim has made its first attempt and waits: no refusal for a second.
    for (let seen = -1; seen !== idleRefusals; ) {
      seen = idleRefusals;
      await new Promise((resolve) => setTimeout(resolve, 1000));
    }
    const latencies: number[] = [];
    const failed = () => {
      if (idleFailure) throw idleFailure;
    };
    const chats: number[] = [];
    for (let index = 0; index < wakeUps + 5; index += 1) {
      let answeredAt = 0;
      const claim = graphqlRequest<Claim>(b, caller, WAIT, { role: 'cfo' }).then((answer) => {
        answeredAt = performance.now();
        return answer;
      });
      // Awaited below; a failure while the chat is sent is reported there, not as an unhandled rejection.
      claim.catch(() => {});
      await new Promise((resolve) => setTimeout(resolve, HEAD_START_MS));
      const started = performance.now();
      await graphqlRequest(a, caller, CHAT);
      const committed = performance.now();
      const answer = await claim;
      const task = answer.claimNextTask.task;
      if (!task) throw new Error(`a waiting claim answered ${answer.claimNextTask.outcome}`);
      await graphqlRequest(b, caller, COMPLETE, { id: task.id });
      failed();
      if (index < 5) continue; // warm-up
      latencies.push(Math.max(0, answeredAt - committed));
      chats.push(committed - started);
    }
    return {
      database,
      instances,
      wakeUps,
      idleWaiters,
      medianMs: median(latencies),
      p99Ms: percentile(latencies, 99),
      worstMs: Math.max(...latencies),
      chatMedianMs: median(chats),
      idleRefusals,
    };
  } finally {
    idle = false;
    // Stopping the gateways ends the idle claims' requests.
    await a.stop();
    if (b !== a) await b.stop();
    await Promise.allSettled(idleLoops);
  }
}
