// Run records: what recording a run's steps adds to the gateway, and reading a long timeline. Per round, on
// a fresh tenant each, tasks run as claim + complete alone, and as claim + 100 model steps reported in
// one batch + complete with their exact sum, interleaved; the CPU of the claim-to-completion requests is
// compared. Then a task with 1,000 steps is read whole (`Task.steps(first: 1000)`) again and again: its
// time and the CPU it takes. The gateway runs in this process, driven through yoga's fetch, on PGlite (its
// worker thread is in this process, so the CPU counted is the gateway's and the database's) or on a
// PostgreSQL server (+ Redis) of its own (the CPU counted is then the gateway's alone; its database
// backends' is measured beside it).
import { randomUUID } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import { signToken } from '../src/auth/tokens.js';
import { BENCH_SECRET, withInProcessApp } from './in-process.js';
import { median, percentile } from './measure.js';
import { backendPids, cpuSeconds } from './processes.js';

/** Where the gateway's database is: PGlite in this process, or a PostgreSQL database (with Redis or not). */
export interface TaskRunDatabase {
  /** A fresh PostgreSQL database; PGlite when absent. */
  databaseUrl?: string;
  /** The server's administration URL, to find the database's backends (their CPU). */
  adminUrl?: string;
  redisUrl?: string;
}

export interface TaskRunFigures {
  database: 'pglite' | 'postgres';
  redis: boolean;
  rounds: number;
  tasksPerRound: number;
  stepsPerTask: number;
  batchSize: number;
  /**
   * Median over rounds of CPU ms per task, claim to completion: the bench process's (user + system, every
   * thread): on PGlite the gateway's and its database's; on PostgreSQL the gateway's alone.
   */
  plainCpuMsPerTask: number;
  steppedCpuMsPerTask: number;
  /** Median over rounds of stepped / plain. */
  cpuRatio: number;
  /**
   * The main thread alone (`process.threadCpuUsage()`, Node 23.9+; null before): on PGlite, the gateway
   * without its database's thread.
   */
  mainThread: { plainCpuMsPerTask: number; steppedCpuMsPerTask: number; cpuRatio: number } | null;
  /** PostgreSQL only: its backends' CPU for the same requests, ms per task (10 ms clock ticks). */
  backends: { plainCpuMsPerTask: number; steppedCpuMsPerTask: number } | null;
  /** Reading a 1,000-step timeline. */
  timelineReads: number;
  timelineP50Ms: number;
  timelineP99Ms: number;
  /** The bench process's CPU (all threads, PGlite's worker included) per read: steadier on a busy machine. */
  timelineCpuP50Ms: number;
  timelineCpuP99Ms: number;
}

const CHAT = `mutation Chat($role: String!) {
  sendChatMessage(role: $role, input: { message: "work", persistThread: false }) { taskId }
}`;
const CLAIM = `mutation Claim($role: String!) { claimNextTask(role: $role) { outcome task { id } } }`;
const REPORT = `mutation Report($taskId: ID!, $steps: [ModelStepInput!]!) {
  reportTaskSteps(taskId: $taskId, steps: $steps) { lastSeq }
}`;
const COMPLETE = `mutation Complete($id: ID!, $input: CompleteTaskInput!) { completeTask(id: $id, input: $input) { status } }`;
const TIMELINE = `query Timeline($id: ID!, $first: Int) {
  task(id: $id) {
    steps(first: $first) {
      nodes { seq attempt kind startedAt durationMs model inputTokens outputTokens tokens costUsd charged
              endpoint httpStatus approvalId childTaskId }
      nextCursor
    }
  }
}`;

const cpuMsSince = (start: NodeJS.CpuUsage) => {
  const { user, system } = process.cpuUsage(start);
  return (user + system) / 1000;
};

/** This thread's CPU alone, where Node has `process.threadCpuUsage()` (23.9+). */
const threadCpuUsage = (
  process as { threadCpuUsage?: (previous?: NodeJS.CpuUsage) => NodeJS.CpuUsage }
).threadCpuUsage?.bind(process);

/** CPU seconds of the database's backends so far, by process id (PostgreSQL). */
async function backendCpu(adminUrl: string, database: string): Promise<Map<number, number>> {
  const pids = await backendPids(adminUrl, database);
  return new Map(await Promise.all(pids.map(async (pid) => [pid, await cpuSeconds(pid)] as const)));
}

/** A model step costing `micros` micro-dollars, of 30 tokens. */
const step = (micros: number) => ({
  model: 'bench-model',
  durationMs: 120,
  inputTokens: 20,
  cachedInputTokens: 5,
  outputTokens: 10,
  reasoningTokens: 2,
  costUsd: micros / 1e6,
  finishReason: 'tool_calls',
});

export async function measureTaskRuns(
  rounds: number,
  tasksPerRound: number,
  timelineReads: number,
  database: TaskRunDatabase = {},
): Promise<TaskRunFigures> {
  const STEPS = 100;
  const BATCH = 100;
  const env: Record<string, string> = {};
  if (database.databaseUrl) env.DATABASE_URL = database.databaseUrl;
  if (database.redisUrl) env.REDIS_URL = database.redisUrl;
  const databaseName = database.databaseUrl ? new URL(database.databaseUrl).pathname.slice(1) : undefined;
  return withInProcessApp('task-runs', env, async (app) => {
    const graphql = async <T>(token: string, query: string, variables: Record<string, unknown>) => {
      const response = await app.yoga.fetch('http://bench/graphql', {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          accept: 'application/json',
          authorization: `Bearer ${token}`,
        },
        body: JSON.stringify({ query, variables }),
      });
      const result = (await response.json()) as { data?: T; errors?: unknown[] };
      if (result.errors || !result.data) throw new Error(JSON.stringify(result.errors ?? result));
      return result.data;
    };
    const company = async () => {
      const tenantId = randomUUID();
      return {
        chairman: await signToken(BENCH_SECRET, { tenantId, sub: 'bench-chairman', roles: ['chairman'] }),
        agent: await signToken(BENCH_SECRET, { tenantId, sub: 'bench-agent', roles: ['agent'] }),
      };
    };
    const claim = async (agent: string) => {
      const { claimNextTask } = await graphql<{ claimNextTask: { task: { id: string } | null } }>(
        agent,
        CLAIM,
        { role: 'cfo' },
      );
      if (!claimNextTask.task) throw new Error('nothing to claim');
      return claimNextTask.task.id;
    };
    const complete = async (agent: string, id: string, micros: number, tokens: number) => {
      await graphql(agent, COMPLETE, {
        id,
        input: { output: 'done', tokensUsed: tokens, costUsd: micros / 1e6 },
      });
    };
    interface RunCpu {
      /** ms per task: this process, its main thread (when Node tells), the database's backends (PostgreSQL). */
      process: number;
      mainThread: number | null;
      backends: number | null;
    }
    /** Runs `tasks` tasks, claim to completion, on a fresh tenant; answers the CPU ms of those requests. */
    const run = async (stepped: boolean): Promise<RunCpu> => {
      const { chairman, agent } = await company();
      for (let index = 0; index < tasksPerRound; index += 1) await graphql(chairman, CHAT, { role: 'cfo' });
      const backendsBefore =
        databaseName && database.adminUrl ? await backendCpu(database.adminUrl, databaseName) : undefined;
      const thread = threadCpuUsage?.();
      const cpu = process.cpuUsage();
      for (let index = 0; index < tasksPerRound; index += 1) {
        const id = await claim(agent);
        if (!stepped) {
          await complete(agent, id, 1000 + index, 30);
          continue;
        }
        let micros = 0;
        for (let from = 0; from < STEPS; from += BATCH) {
          const steps = Array.from({ length: BATCH }, (_, offset) => step(10 + ((from + offset) % 7)));
          micros += steps.reduce((sum, item) => sum + Math.round(item.costUsd * 1e6), 0);
          await graphql(agent, REPORT, { taskId: id, steps });
        }
        await complete(agent, id, micros, STEPS * 30);
      }
      const processMs = cpuMsSince(cpu);
      const threadUsage = thread && threadCpuUsage ? threadCpuUsage(thread) : undefined;
      let backendsMs: number | null = null;
      if (backendsBefore && databaseName && database.adminUrl) {
        const after = await backendCpu(database.adminUrl, databaseName);
        // A backend that ended in between loses its share; the pool keeps its connections for the run.
        backendsMs = 0;
        for (const [pid, seconds] of after) backendsMs += (seconds - (backendsBefore.get(pid) ?? 0)) * 1000;
      }
      return {
        process: processMs / tasksPerRound,
        mainThread: threadUsage ? (threadUsage.user + threadUsage.system) / 1000 / tasksPerRound : null,
        backends: backendsMs === null ? null : backendsMs / tasksPerRound,
      };
    };
    // One of each to warm up.
    await run(false);
    await run(true);
    const plain: RunCpu[] = [];
    const stepped: RunCpu[] = [];
    for (let round = 0; round < rounds; round += 1) {
      const first = round % 2 === 0;
      const a = first ? await run(false) : await run(true);
      const b = first ? await run(true) : await run(false);
      const [p, s] = first ? [a, b] : [b, a];
      plain.push(p);
      stepped.push(s);
    }
    const medianOf = (runs: RunCpu[], pick: (run: RunCpu) => number | null) =>
      median(runs.map((run) => pick(run) ?? Number.NaN));
    const ratioOf = (pick: (run: RunCpu) => number | null) =>
      median(
        plain.map((p, index) => (pick(stepped[index] as RunCpu) ?? Number.NaN) / (pick(p) ?? Number.NaN)),
      );

    // A 1,000-step timeline, read whole.
    const { chairman, agent } = await company();
    await graphql(chairman, CHAT, { role: 'cfo' });
    const id = await claim(agent);
    for (let from = 0; from < 1000; from += 500) {
      await graphql(agent, REPORT, { taskId: id, steps: Array.from({ length: 500 }, () => step(10)) });
    }
    await complete(agent, id, 10_000, 30_000);
    const read = () =>
      graphql<{ task: { steps: { nodes: unknown[] } } }>(chairman, TIMELINE, { id, first: 1000 });
    const check = await read();
    if (check.task.steps.nodes.length !== 1000) {
      throw new Error(`the timeline read ${check.task.steps.nodes.length} steps, not 1,000`);
    }
    const times: number[] = [];
    const cpu: number[] = [];
    for (let index = 0; index < timelineReads; index += 1) {
      const started = performance.now();
      const cpuStart = process.cpuUsage();
      await read();
      cpu.push(cpuMsSince(cpuStart));
      times.push(performance.now() - started);
    }
    return {
      database: database.databaseUrl ? 'postgres' : 'pglite',
      redis: !!database.redisUrl,
      rounds,
      tasksPerRound,
      stepsPerTask: STEPS,
      batchSize: BATCH,
      plainCpuMsPerTask: medianOf(plain, (run) => run.process),
      steppedCpuMsPerTask: medianOf(stepped, (run) => run.process),
      cpuRatio: ratioOf((run) => run.process),
      mainThread: threadCpuUsage
        ? {
            plainCpuMsPerTask: medianOf(plain, (run) => run.mainThread),
            steppedCpuMsPerTask: medianOf(stepped, (run) => run.mainThread),
            cpuRatio: ratioOf((run) => run.mainThread),
          }
        : null,
      backends: databaseName
        ? {
            plainCpuMsPerTask: medianOf(plain, (run) => run.backends),
            steppedCpuMsPerTask: medianOf(stepped, (run) => run.backends),
          }
        : null,
      timelineReads,
      timelineP50Ms: percentile(times, 50),
      timelineP99Ms: percentile(times, 99),
      timelineCpuP50Ms: percentile(cpu, 50),
      timelineCpuP99Ms: percentile(cpu, 99),
    };
  });
}
