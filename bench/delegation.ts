// Delegation of a 3-level tree of 50 tasks end to end against the same work as 50 independent chats: a
// CEO task delegates to the 7 other C-suite roles, each of them to 6 roles registered below it; the 42
// leaves complete, the 7 middle tasks resume, are claimed again and complete, then the root. Against it,
// in the same rounds, a chat for each of the same 50 roles, each claimed and completed. One request at a
// time, on PGlite in this process (as the MCP case: both faces go through the same yoga server's fetch);
// each round and face on a fresh tenant, so queues never mix.
import { randomUUID } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import { signToken } from '../src/auth/tokens.js';
import { BENCH_SECRET, withInProcessApp } from './in-process.js';
import { median } from './measure.js';

export interface DelegationFigures {
  rounds: number;
  /** Tasks of one tree, and of one batch of chats. */
  tasks: number;
  /** Requests one tree takes (chat, claims, delegations, completions), and one batch of chats. */
  treeRequests: number;
  chatRequests: number;
  /** Median time of one whole tree, from the root's chat to its completion, and of one batch of chats. */
  treeMedianMs: number;
  chatsMedianMs: number;
  /** Median over rounds of (tree time / chats time). */
  ratio: number;
  /** The same from this process's CPU (user + system, all threads): steadier on a busy machine. */
  treeCpuMedianMs: number;
  chatsCpuMedianMs: number;
  cpuRatio: number;
  /** Per operation (chat, claim, delegate, complete), the median over rounds of its mean time per call. */
  treeMsPerCall: Partial<Record<Operation, number>>;
  chatsMsPerCall: Partial<Record<Operation, number>>;
  /** Per round, in the order measured. */
  treeMs: number[];
  chatsMs: number[];
}

const OPERATIONS = ['chat', 'claim', 'delegate', 'complete'] as const;
type Operation = (typeof OPERATIONS)[number];
type Operations = Partial<Record<Operation, { calls: number; ms: number }>>;
interface Run {
  ms: number;
  /** CPU of this process (every thread: the server and PGlite) over the run. */
  cpuMs: number;
  operations: Operations;
}

const cpuMsSince = (start: NodeJS.CpuUsage) => {
  const { user, system } = process.cpuUsage(start);
  return (user + system) / 1000;
};

const SECRET = BENCH_SECRET;
const C_SUITE = ['cfo', 'cto', 'cmo', 'coo', 'clo', 'chro', 'cpo'];
const REPORTS = 6;
/** The 42 registered roles under each C-suite role but the CEO: `cfo-analyst-1` … `cpo-analyst-6`. */
const LEAVES = Object.fromEntries(
  C_SUITE.map((manager) => [
    manager,
    Array.from({ length: REPORTS }, (_, index) => `${manager}-analyst-${index + 1}`),
  ]),
) as Record<string, string[]>;
const ROLES = ['ceo', ...C_SUITE, ...C_SUITE.flatMap((manager) => LEAVES[manager] ?? [])];

const REGISTER = `mutation Register($input: RegisterAgentRoleInput!) { registerAgentRole(input: $input) { role } }`;
const CHAT = `mutation Chat($role: String!, $message: String!) {
  sendChatMessage(role: $role, input: { message: $message, persistThread: false }) { taskId }
}`;
/** One claim for both faces: a resumed task's agent reads its children's answers. */
const CLAIM = `mutation Claim($role: String!) {
  claimNextTask(role: $role) { outcome task { id role children { role status output } } }
}`;
const DELEGATE = `mutation Delegate($taskId: ID!, $input: DelegateTaskInput!) {
  delegateTask(taskId: $taskId, input: $input) { parent { id status } children { id role } }
}`;
const COMPLETE = `mutation Complete($id: ID!, $input: CompleteTaskInput!) {
  completeTask(id: $id, input: $input) { id status }
}`;
const TREE = `query Tree($id: ID!) {
  task(id: $id) {
    status
    treeCost { costUsd tokensUsed }
    children { status children { status } }
  }
}`;

interface Claimed {
  claimNextTask: { outcome: string; task: { id: string; role: string } | null };
}

export async function measureDelegation(rounds: number): Promise<DelegationFigures> {
  return withInProcessApp('delegation', {}, async (app) => {
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

    /** A fresh tenant with the 42 roles registered below the C-suite: its chairman's and agent's tokens. */
    const company = async () => {
      const tenantId = randomUUID();
      const chairman = await signToken(SECRET, { tenantId, sub: 'bench-chairman', roles: ['chairman'] });
      const agent = await signToken(SECRET, { tenantId, sub: 'bench-agent', roles: ['agent'] });
      for (const manager of C_SUITE) {
        for (const role of LEAVES[manager] ?? []) {
          await graphql(chairman, REGISTER, { input: { role, reportsTo: manager } });
        }
      }
      return { chairman, agent };
    };

    // The calls of the run being measured and their time, by operation.
    let operations: Operations = {};
    const counted = async <T>(
      operation: Operation,
      token: string,
      query: string,
      variables: Record<string, unknown>,
    ) => {
      const started = performance.now();
      const data = await graphql<T>(token, query, variables);
      const entry = operations[operation] ?? { calls: 0, ms: 0 };
      operations[operation] = { calls: entry.calls + 1, ms: entry.ms + performance.now() - started };
      return data;
    };
    const claim = async (agent: string, role: string) => {
      const { claimNextTask } = await counted<Claimed>('claim', agent, CLAIM, { role });
      if (!claimNextTask.task) throw new Error(`nothing to claim for ${role}: ${claimNextTask.outcome}`);
      return claimNextTask.task.id;
    };
    const complete = async (agent: string, id: string, micros: number) => {
      const { completeTask } = await counted<{ completeTask: { status: string } }>(
        'complete',
        agent,
        COMPLETE,
        {
          id,
          input: { output: 'done', tokensUsed: 100, costUsd: micros / 1e6 },
        },
      );
      if (completeTask.status !== 'completed') throw new Error(`task ${id} is ${completeTask.status}`);
    };
    const chat = async (chairman: string, role: string) =>
      (
        await counted<{ sendChatMessage: { taskId: string } }>('chat', chairman, CHAT, {
          role,
          message: `Work for ${role}`,
        })
      ).sendChatMessage.taskId;

    /** One tree on a fresh tenant: its time, then a check of its tasks and of its tree's cost. */
    const tree = async () => {
      const { chairman, agent } = await company();
      // Every reported cost, to the micro-dollar, distinct per report so that a lost or doubled one shows.
      let micros = 0;
      let tokens = 0;
      let cost = 1000;
      const report = () => {
        cost += 7;
        micros += cost;
        tokens += 100;
        return cost;
      };
      const delegate = async (taskId: string, roles: string[]) => {
        await counted('delegate', agent, DELEGATE, {
          taskId,
          input: {
            delegations: roles.map((role) => ({ role, message: `Work for ${role}` })),
            tokensUsed: 100,
            costUsd: report() / 1e6,
          },
        });
      };
      operations = {};
      const cpu = process.cpuUsage();
      const started = performance.now();
      const rootId = await chat(chairman, 'ceo');
      await claim(agent, 'ceo');
      await delegate(rootId, C_SUITE);
      for (const manager of C_SUITE) {
        const id = await claim(agent, manager);
        await delegate(id, LEAVES[manager] ?? []);
      }
      for (const manager of C_SUITE) {
        for (const role of LEAVES[manager] ?? []) await complete(agent, await claim(agent, role), report());
      }
      for (const manager of C_SUITE) await complete(agent, await claim(agent, manager), report());
      await complete(agent, await claim(agent, 'ceo'), report());
      const ms = performance.now() - started;
      const cpuMs = cpuMsSince(cpu);
      const measured = operations;
      const { task } = await graphql<{
        task: {
          status: string;
          treeCost: { costUsd: number; tokensUsed: number };
          children: { status: string; children: { status: string }[] }[];
        };
      }>(chairman, TREE, { id: rootId });
      const statuses = [
        task.status,
        ...task.children.flatMap((child) => [child.status, ...child.children.map((leaf) => leaf.status)]),
      ];
      const completed = statuses.filter((status) => status === 'completed').length;
      if (statuses.length !== ROLES.length || completed !== ROLES.length) {
        throw new Error(`${completed} of ${statuses.length} tasks completed, ${ROLES.length} expected`);
      }
      if (Math.round(task.treeCost.costUsd * 1e6) !== micros || task.treeCost.tokensUsed !== tokens) {
        throw new Error(
          `treeCost ${JSON.stringify(task.treeCost)} is not the reported ${micros / 1e6} USD, ${tokens} tokens`,
        );
      }
      return { ms, cpuMs, operations: measured };
    };

    /** The same 50 roles' work as independent chats on a fresh tenant, each claimed and completed. */
    const chats = async () => {
      const { chairman, agent } = await company();
      let cost = 1000;
      operations = {};
      const cpu = process.cpuUsage();
      const started = performance.now();
      for (const role of ROLES) await chat(chairman, role);
      for (const role of ROLES) {
        cost += 7;
        await complete(agent, await claim(agent, role), cost);
      }
      const ms = performance.now() - started;
      return { ms, cpuMs: cpuMsSince(cpu), operations };
    };

    // Warm-up of both faces (statements, JIT), then rounds that alternate which face goes first.
    await tree();
    await chats();
    const trees: Run[] = [];
    const batches: Run[] = [];
    for (let round = 0; round < rounds; round += 1) {
      if (round % 2 === 0) {
        trees.push(await tree());
        batches.push(await chats());
      } else {
        batches.push(await chats());
        trees.push(await tree());
      }
    }
    const requests = (run: Run | undefined) =>
      Object.values(run?.operations ?? {}).reduce((sum, { calls }) => sum + calls, 0);
    /** Per operation, the median over rounds of its mean time per call. */
    const perCall = (runs: Run[]) =>
      Object.fromEntries(
        OPERATIONS.filter((operation) => runs[0]?.operations[operation]).map((operation) => [
          operation,
          median(
            runs.map((run) => {
              const entry = run.operations[operation];
              return entry ? entry.ms / entry.calls : Number.NaN;
            }),
          ),
        ]),
      );
    return {
      rounds,
      tasks: ROLES.length,
      treeRequests: requests(trees[0]),
      chatRequests: requests(batches[0]),
      treeMedianMs: median(trees.map((run) => run.ms)),
      chatsMedianMs: median(batches.map((run) => run.ms)),
      ratio: median(trees.map((run, round) => run.ms / (batches[round]?.ms ?? Number.NaN))),
      treeCpuMedianMs: median(trees.map((run) => run.cpuMs)),
      chatsCpuMedianMs: median(batches.map((run) => run.cpuMs)),
      cpuRatio: median(trees.map((run, round) => run.cpuMs / (batches[round]?.cpuMs ?? Number.NaN))),
      treeMsPerCall: perCall(trees),
      chatsMsPerCall: perCall(batches),
      treeMs: trees.map((run) => run.ms),
      chatsMs: batches.map((run) => run.ms),
    };
  });
}
