// Run records: what recording a run's steps adds to the gateway, and reading a long timeline. The gateway is
// `npm start`'s server in a process of its own (NODE_ENV=production), driven over loopback HTTP from this
// one, on PGlite (its worker thread in the gateway's process: the CPU counted is the gateway's and its
// database's, with the main thread's alone beside it) or on a PostgreSQL database (+ Redis) of its own (the
// CPU counted is the gateway's alone; its database backends' is measured beside it). Per round, on a fresh
// tenant each, tasks run as claim + complete alone; as claim + a completion carrying its 100 model steps
// with their exact sum (what the reference runtime sends when a run's steps are still unreported at its
// end); and as claim + the 100 steps in a report of their own + complete, interleaved; the gateway's CPU
// for the claim-to-completion requests is compared. Then a task with 1,000 steps is read whole
// (`Task.steps(first: 1000)`) again and again: its time, and the gateway's CPU per read.
import { randomUUID } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import { signToken } from '../src/auth/tokens.js';
import { median, percentile } from './measure.js';
import { backendPids, cpuSeconds } from './processes.js';
import {
  type Caller,
  type DatabaseKind,
  type Gateway,
  graphqlRequest,
  jwtSecret,
  startGateway,
} from './servers.js';

export interface TaskRunFigures {
  database: DatabaseKind;
  redis: boolean;
  rounds: number;
  tasksPerRound: number;
  stepsPerTask: number;
  /**
   * Median over rounds of the gateway process's CPU ms per task (user + system, 10 ms clock ticks), claim to
   * completion: on PGlite the gateway's and its database's; on PostgreSQL the gateway's alone. `stepped`: the
   * steps carried by the completion; `reported`: the steps in a report of their own before it.
   */
  plainCpuMsPerTask: number;
  steppedCpuMsPerTask: number;
  reportedCpuMsPerTask: number;
  /** Median over rounds of stepped / plain, and of reported / plain. */
  cpuRatio: number;
  reportedCpuRatio: number;
  /** The gateway's main thread alone: on PGlite, the gateway without its database's thread. */
  mainThread: {
    plainCpuMsPerTask: number;
    steppedCpuMsPerTask: number;
    reportedCpuMsPerTask: number;
    cpuRatio: number;
    reportedCpuRatio: number;
  };
  /** PostgreSQL only: its backends' CPU for the same requests, ms per task (10 ms clock ticks). */
  backends: { plainCpuMsPerTask: number; steppedCpuMsPerTask: number; reportedCpuMsPerTask: number } | null;
  /** Reading a 1,000-step timeline over HTTP: each read's time, and the gateway's CPU per read (all reads). */
  timelineReads: number;
  timelineP50Ms: number;
  timelineP99Ms: number;
  timelineCpuMsPerRead: number;
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

/** How a face's tasks end: alone, with their steps carried by the completion, or reported before it. */
type Face = 'plain' | 'stepped' | 'reported';

/** CPU ms of one run's requests, per task. */
interface RunCpu {
  process: number;
  mainThread: number;
  backends: number | null;
}

export async function measureTaskRuns(
  database: DatabaseKind,
  options: {
    runDir: string;
    postgresUrl: string;
    redisUrl?: string | undefined;
    rounds: number;
    tasksPerRound: number;
    timelineReads: number;
  },
): Promise<TaskRunFigures> {
  const STEPS = 100;
  const { rounds, tasksPerRound, timelineReads } = options;
  const gateway: Gateway = await startGateway({
    name: `task-runs-${database}`,
    database,
    runDir: options.runDir,
    postgresUrl: options.postgresUrl,
    ...(options.redisUrl ? { redisUrl: options.redisUrl } : {}),
  });
  try {
    const company = async (): Promise<{ chairman: Caller; agent: Caller }> => {
      const tenantId = randomUUID();
      const caller = async (sub: string, roles: string[]) => ({
        tenantId,
        sub,
        token: await signToken(jwtSecret, { tenantId, sub, roles }),
      });
      return {
        chairman: await caller('bench-chairman', ['chairman']),
        agent: await caller('bench-agent', ['agent']),
      };
    };
    const claim = async (agent: Caller) => {
      const { claimNextTask } = await graphqlRequest<{ claimNextTask: { task: { id: string } | null } }>(
        gateway,
        agent,
        CLAIM,
        { role: 'cfo' },
      );
      if (!claimNextTask.task) throw new Error('nothing to claim');
      return claimNextTask.task.id;
    };
    const complete = (agent: Caller, id: string, micros: number, tokens: number, steps?: unknown[]) =>
      graphqlRequest(gateway, agent, COMPLETE, {
        id,
        input: { output: 'done', tokensUsed: tokens, costUsd: micros / 1e6, ...(steps ? { steps } : {}) },
      });
    const backendCpu = async (): Promise<number | null> => {
      if (!gateway.databaseName) return null;
      const pids = await backendPids(options.postgresUrl, gateway.databaseName);
      const seconds = await Promise.all(pids.map((pid) => cpuSeconds(pid)));
      return seconds.reduce((sum, value) => sum + value, 0);
    };
    const cpuNow = async () => ({
      process: await cpuSeconds(gateway.pid),
      mainThread: await cpuSeconds(gateway.pid, gateway.pid),
      backends: await backendCpu(),
    });
    /** Runs `tasksPerRound` tasks, claim to completion, on a fresh tenant: the CPU ms of those requests. */
    const run = async (face: Face): Promise<RunCpu> => {
      const { chairman, agent } = await company();
      for (let index = 0; index < tasksPerRound; index += 1) {
        await graphqlRequest(gateway, chairman, CHAT, { role: 'cfo' });
      }
      // The chats' events are relayed before the measured requests start.
      await new Promise((resolve) => setTimeout(resolve, 200));
      const before = await cpuNow();
      for (let index = 0; index < tasksPerRound; index += 1) {
        const id = await claim(agent);
        if (face === 'plain') {
          await complete(agent, id, 1000 + index, 30);
          continue;
        }
        const steps = Array.from({ length: STEPS }, (_, offset) => step(10 + (offset % 7)));
        const micros = steps.reduce((sum, item) => sum + Math.round(item.costUsd * 1e6), 0);
        if (face === 'reported') {
          await graphqlRequest(gateway, agent, REPORT, { taskId: id, steps });
          await complete(agent, id, micros, STEPS * 30);
        } else await complete(agent, id, micros, STEPS * 30, steps);
      }
      // The completions' events are relayed (their relay passes counted with them) before the CPU is read.
      await new Promise((resolve) => setTimeout(resolve, 200));
      const after = await cpuNow();
      const perTask = (seconds: number) => (seconds * 1000) / tasksPerRound;
      return {
        process: perTask(after.process - before.process),
        mainThread: perTask(after.mainThread - before.mainThread),
        backends:
          after.backends === null || before.backends === null
            ? null
            : perTask(after.backends - before.backends),
      };
    };
    const faces: Face[] = ['plain', 'stepped', 'reported'];
    // One of each to warm up.
    for (const face of faces) await run(face);
    const runs = new Map<Face, RunCpu[]>(faces.map((face) => [face, []]));
    for (let round = 0; round < rounds; round += 1) {
      // Each round starts with another face.
      for (let offset = 0; offset < faces.length; offset += 1) {
        const face = faces[(round + offset) % faces.length] as Face;
        runs.get(face)?.push(await run(face));
      }
    }
    const plain = runs.get('plain') ?? [];
    const stepped = runs.get('stepped') ?? [];
    const reported = runs.get('reported') ?? [];
    const medianOf = (of: RunCpu[], pick: (cpu: RunCpu) => number | null) =>
      median(of.map((cpu) => pick(cpu) ?? Number.NaN));
    const ratioOf = (of: RunCpu[], pick: (cpu: RunCpu) => number | null) =>
      median(plain.map((p, index) => (pick(of[index] as RunCpu) ?? Number.NaN) / (pick(p) ?? Number.NaN)));

    // A 1,000-step timeline, read whole.
    const { chairman, agent } = await company();
    await graphqlRequest(gateway, chairman, CHAT, { role: 'cfo' });
    const id = await claim(agent);
    for (let from = 0; from < 1000; from += 500) {
      await graphqlRequest(gateway, agent, REPORT, {
        taskId: id,
        steps: Array.from({ length: 500 }, () => step(10)),
      });
    }
    await complete(agent, id, 10_000, 30_000);
    const read = () =>
      graphqlRequest<{ task: { steps: { nodes: unknown[] } } }>(gateway, chairman, TIMELINE, {
        id,
        first: 1000,
      });
    const check = await read();
    if (check.task.steps.nodes.length !== 1000) {
      throw new Error(`the timeline read ${check.task.steps.nodes.length} steps, not 1,000`);
    }
    await new Promise((resolve) => setTimeout(resolve, 200));
    const times: number[] = [];
    const cpuBefore = await cpuSeconds(gateway.pid);
    for (let index = 0; index < timelineReads; index += 1) {
      const started = performance.now();
      await read();
      times.push(performance.now() - started);
    }
    const readsCpu = (await cpuSeconds(gateway.pid)) - cpuBefore;
    return {
      database,
      redis: !!options.redisUrl,
      rounds,
      tasksPerRound,
      stepsPerTask: STEPS,
      plainCpuMsPerTask: medianOf(plain, (cpu) => cpu.process),
      steppedCpuMsPerTask: medianOf(stepped, (cpu) => cpu.process),
      reportedCpuMsPerTask: medianOf(reported, (cpu) => cpu.process),
      cpuRatio: ratioOf(stepped, (cpu) => cpu.process),
      reportedCpuRatio: ratioOf(reported, (cpu) => cpu.process),
      mainThread: {
        plainCpuMsPerTask: medianOf(plain, (cpu) => cpu.mainThread),
        steppedCpuMsPerTask: medianOf(stepped, (cpu) => cpu.mainThread),
        reportedCpuMsPerTask: medianOf(reported, (cpu) => cpu.mainThread),
        cpuRatio: ratioOf(stepped, (cpu) => cpu.mainThread),
        reportedCpuRatio: ratioOf(reported, (cpu) => cpu.mainThread),
      },
      backends: gateway.databaseName
        ? {
            plainCpuMsPerTask: medianOf(plain, (cpu) => cpu.backends),
            steppedCpuMsPerTask: medianOf(stepped, (cpu) => cpu.backends),
            reportedCpuMsPerTask: medianOf(reported, (cpu) => cpu.backends),
          }
        : null,
      timelineReads,
      timelineP50Ms: percentile(times, 50),
      timelineP99Ms: percentile(times, 99),
      timelineCpuMsPerRead: (readsCpu * 1000) / timelineReads,
    };
  } finally {
    await gateway.stop();
  }
}
