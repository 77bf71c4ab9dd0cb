import { describe, expect, it, vi } from 'vitest';
import { type AgentSummary, runAgent } from '../../agent/runtime.js';
import { connectorToolName } from '../../mcp/connector-tools.js';
import { sweepExpiredLeases } from '../../src/domain/agents/lease-sweeper.js';
import { readTaskSteps } from '../../src/domain/agents/task-steps.js';
import type { RunningServer } from '../../src/server.js';
import { completion, startModelServer } from '../agent/model-server.js';
import { callTool, connectMcp } from '../mcp/mcp-support.js';
import {
  forgeLedger,
  POST_CUSTOMER,
  serveInvoices,
  withConnectorUpstream,
} from '../rest/connectors-support.js';
import type { Caller, TestApp } from '../support/app.js';
import type { TestHttpsServer } from '../support/https-server.js';
import { queueTask, watchBus } from './agents-support.js';

const PRICES = { 'test-model': { input: 2, cachedInput: 1, output: 8, reasoning: 8 } };

let upstream: TestHttpsServer;
let t: TestApp;
let server: RunningServer;

withConnectorUpstream((started) => {
  ({ upstream, t, server } = started);
  serveInvoices(upstream);
});

const STEP_FIELDS = `seq attempt kind source startedAt durationMs model inputTokens cachedInputTokens outputTokens
  reasoningTokens tokens costUsd costUsdText charged finishReason connectorId endpoint httpStatus bytes outcome
  approvalId childTaskId routing reason content`;

const RUN = `query Run($id: ID!, $first: Int, $after: String) {
  task(id: $id) { id status costUsd tokensUsed steps(first: $first, after: $after) { nodes { ${STEP_FIELDS} } nextCursor } }
}`;

const REPORT = `mutation Report($taskId: ID!, $steps: [ModelStepInput!]!) {
  reportTaskSteps(taskId: $taskId, steps: $steps) { taskId attempt firstSeq lastSeq recorded }
}`;

const CLAIM = `mutation Claim($role: String!) { claimTask(role: $role) { id } }`;
const COMPLETE = `mutation Complete($id: ID!, $input: CompleteTaskInput!) {
  completeTask(id: $id, input: $input) { id status costUsd tokensUsed }
}`;

async function gql<T = any>(document: string, variables: Record<string, unknown>, caller: Caller) {
  return t.graphql<T, Record<string, unknown>>(document, variables, caller);
}

async function ok<T = any>(document: string, variables: Record<string, unknown>, caller: Caller): Promise<T> {
  const result = await gql<T>(document, variables, caller);
  if (result.errors) throw new Error(`operation failed: ${JSON.stringify(result.errors)}`);
  return result.data as T;
}

async function company() {
  const chairman = await t.caller(['chairman']);
  await t.app.services.tenants.ensure(chairman.tenantId);
  const agent = await t.caller(['agent'], { tenantId: chairman.tenantId });
  return { chairman, agent };
}

/** A connector whose GET /invoices is called at once and whose POST /customers waits for an approval. */
async function ledger(chairman: Caller) {
  const id = await forgeLedger(t, chairman, upstream, {
    description: 'Invoices and customers.',
    endpoints: [{ method: 'GET', path: '/invoices' }, POST_CUSTOMER],
  });
  const gated = await t.rest('PUT', `/api/v1/forge/connectors/${id}/approval-policy`, {
    caller: chairman,
    body: { rules: [{ methods: ['POST'] }] },
  });
  expect(gated.status).toBe(200);
  return id;
}

const usage = (prompt: number, output: number, cached = 0, reasoning = 0) => ({
  prompt_tokens: prompt,
  completion_tokens: output,
  total_tokens: prompt + output,
  prompt_tokens_details: { cached_tokens: cached },
  completion_tokens_details: { reasoning_tokens: reasoning },
});

const toolCall = (id: string, name: string, args: unknown) => ({
  id,
  type: 'function',
  function: { name, arguments: JSON.stringify(args) },
});

/** Runs the reference runtime for `role` until `until` holds. */
async function runUntil(
  agent: Caller,
  runs: { role: string; baseURL: string }[],
  until: () => Promise<void>,
): Promise<AgentSummary[]> {
  const controller = new AbortController();
  const running = runs.map(({ role, baseURL }) =>
    runAgent({
      boardroomUrl: server.url,
      role,
      token: agent.token,
      openai: { baseURL, apiKey: 'test-key' },
      model: 'test-model',
      prices: PRICES,
      waitSeconds: 1,
      signal: controller.signal,
      idleBackoffMs: { min: 20, max: 100 },
      log: () => {},
    }),
  );
  try {
    await vi.waitFor(until, { timeout: 20_000, interval: 50 });
  } finally {
    controller.abort('SIGTERM');
  }
  return Promise.all(running);
}

describe('run records', () => {
  it('records a run of the reference runtime step by step, with costs adding up to the task’s', async () => {
    const { chairman, agent } = await company();
    const connectorId = await ledger(chairman);
    const invoices = connectorToolName({ id: connectorId, name: 'Ledger' }, 'GET', '/invoices');
    const customers = connectorToolName({ id: connectorId, name: 'Ledger' }, 'POST', '/customers');
    const ceoModel = await startModelServer([
      completion(
        {
          tool_calls: [
            toolCall('call_1', 'call_connector_endpoint', { name: invoices, arguments: {} }),
            toolCall('call_2', 'call_connector_endpoint', {
              name: customers,
              arguments: { body: { email: 'a@example.com' } },
            }),
            toolCall('call_3', 'boardroom_delegate', {
              delegations: [{ role: 'cfo', message: 'Revenue this quarter?' }],
            }),
          ],
        },
        usage(1000, 100, 400, 30),
      ),
      completion({ content: 'Revenue is 1.2M.' }, usage(2000, 50)),
    ]);
    const cfoModel = await startModelServer([completion({ content: 'Revenue: 1.2M' }, usage(300, 20))]);
    const rootId = await queueTask(t, chairman, 'ceo', 'Brief the board.');

    await runUntil(
      agent,
      [
        { role: 'ceo', baseURL: ceoModel.baseURL },
        { role: 'cfo', baseURL: cfoModel.baseURL },
      ],
      async () => {
        expect((await ok(RUN, { id: rootId }, chairman)).task.status).toBe('completed');
      },
    );
    await Promise.all([ceoModel.close(), cfoModel.close()]);

    const run = (await ok(RUN, { id: rootId }, chairman)).task;
    const steps = run.steps.nodes as Record<string, any>[];
    const child = await t.db.prisma.task.findFirstOrThrow({ where: { parentTaskId: rootId } });
    const approval = await t.db.prisma.connectorCallApproval.findFirstOrThrow({ where: { connectorId } });
    expect(steps.map((step) => [step.seq, step.attempt, step.kind, step.source])).toEqual([
      [1, 1, 'claimed', 'gateway'],
      [2, 1, 'connector_call', 'gateway'],
      [3, 1, 'approval_requested', 'gateway'],
      [4, 1, 'model_call', 'agent'],
      [5, 1, 'delegated', 'gateway'],
      [6, 2, 'claimed', 'gateway'],
      [7, 2, 'model_call', 'agent'],
      [8, 2, 'completed', 'gateway'],
    ]);
    expect(steps[1]).toMatchObject({
      connectorId,
      endpoint: 'GET /invoices',
      httpStatus: 200,
      outcome: 'success',
      content: null,
    });
    expect(steps[1]?.bytes).toBeGreaterThan(0);
    expect(steps[2]).toMatchObject({ approvalId: approval.id, endpoint: 'POST /customers' });
    expect(steps[3]).toMatchObject({
      model: 'test-model',
      inputTokens: 1000,
      cachedInputTokens: 400,
      outputTokens: 100,
      reasoningTokens: 30,
      tokens: 1100,
      costUsdText: '0.002400',
      finishReason: 'tool_calls',
      charged: true,
      content: null,
    });
    expect(steps[4]).toMatchObject({ childTaskId: child.id, costUsd: 0, charged: true });
    expect(steps[6]).toMatchObject({ tokens: 2050, costUsdText: '0.004400', finishReason: 'stop' });
    // The charged steps' costs add up exactly to the task's, and their tokens to its tokens.
    const micros = steps
      .filter((step) => step.charged)
      .reduce((sum, step) => sum + Math.round(Number(step.costUsdText) * 1e6), 0);
    const stored = await t.db.prisma.task.findUniqueOrThrow({ where: { id: rootId } });
    expect(stored.costUsd?.toFixed(6)).toBe((micros / 1e6).toFixed(6));
    expect(steps.filter((step) => step.charged).reduce((sum, step) => sum + (step.tokens ?? 0), 0)).toBe(
      Number(stored.tokensUsed),
    );
    expect(stored.tokensUsed).toBe(3150n);
    // Content capture is off: no body text is stored anywhere in the run record.
    expect(
      await t.db.prisma.taskStep.count({
        where: { taskId: rootId, NOT: { content: { equals: null as never } } },
      }),
    ).toBe(0);
    const childRun = (await ok(RUN, { id: child.id }, chairman)).task.steps.nodes;
    expect(childRun.map((step: any) => step.kind)).toEqual(['claimed', 'model_call', 'completed']);

    // The chairman's decision on the gated call goes into the record of the task it was made for.
    const rejected = await ok(
      'mutation($id: ID!) { rejectConnectorCall(id: $id, note: "Not now") { id } }',
      { id: approval.id },
      chairman,
    );
    expect(rejected.rejectConnectorCall.id).toBe(approval.id);
    const decided = (await ok(RUN, { id: rootId }, chairman)).task.steps.nodes.at(-1);
    expect(decided).toMatchObject({
      seq: 9,
      kind: 'approval_decided',
      approvalId: approval.id,
      outcome: 'rejected',
      reason: 'Not now',
      costUsd: 0,
    });

    // Another tenant sees none of it.
    const stranger = await t.caller(['chairman']);
    expect((await ok(RUN, { id: rootId }, stranger)).task).toBeNull();
    const foreignDelete = await gql(
      'mutation($id: ID!) { deleteTask(id: $id) { ids } }',
      { id: rootId },
      stranger,
    );
    expect(foreignDelete.errors?.[0]?.extensions?.code).toBe('NOT_FOUND');
    expect(await t.db.prisma.taskStep.count({ where: { taskId: rootId } })).toBe(9);

    // Deleting the task removes its steps and its sub-task's.
    const deleted = await ok('mutation($id: ID!) { deleteTask(id: $id) { ids } }', { id: rootId }, chairman);
    expect(deleted.deleteTask.ids).toHaveLength(2);
    expect(await t.db.prisma.taskStep.count({ where: { taskId: { in: [rootId, child.id] } } })).toBe(0);
  });

  it('keeps reported bodies redacted only when the tenant captures content', async () => {
    const { chairman, agent } = await company();
    const step = {
      model: 'test-model',
      durationMs: 12,
      inputTokens: 10,
      outputTokens: 5,
      costUsd: 0.00006,
      request: 'Authorization: Bearer abcdefghijklmnop please summarise',
      response: 'done, api_key=sk-live-1234567890abcdef',
    };
    const off = await queueTask(t, chairman, 'cfo', 'one');
    expect((await ok(CLAIM, { role: 'cfo' }, agent)).claimTask.id).toBe(off);
    await ok(REPORT, { taskId: off, steps: [step] }, agent);

    const set = await ok(
      'mutation { setRunContentCapture(enabled: true, retentionDays: 7) { enabled retentionDays } }',
      {},
      chairman,
    );
    expect(set.setRunContentCapture).toEqual({ enabled: true, retentionDays: 7 });
    await ok(REPORT, { taskId: off, steps: [step] }, agent);

    const steps = (await ok(RUN, { id: off }, chairman)).task.steps.nodes;
    expect(steps.map((s: any) => s.kind)).toEqual(['claimed', 'model_call', 'model_call']);
    expect(steps[1].content).toBeNull();
    expect(steps[2].content).toEqual({
      request: 'Authorization: [REDACTED] [REDACTED] please summarise',
      response: 'done, api_key=[REDACTED]',
    });
    const rows = await t.db.prisma.taskStep.findMany({ where: { taskId: off }, orderBy: { seq: 'asc' } });
    expect(JSON.stringify(rows.map((row) => row.content))).not.toMatch(/abcdefghijklmnop|sk-live/);
    expect(rows[2]?.contentExpiresAt).not.toBeNull();
  });

  it('refuses bad reports with the reason and changes nothing', async () => {
    const { chairman, agent } = await company();
    const otherAgent = await t.caller(['agent'], { tenantId: chairman.tenantId });
    const stranger = await t.caller(['agent']);
    const taskId = await queueTask(t, chairman, 'cfo', 'work');
    await ok(CLAIM, { role: 'cfo' }, agent);
    const step = { model: 'm', durationMs: 1, inputTokens: 3, outputTokens: 2, costUsd: 0.00001 };
    const count = () => t.db.prisma.taskStep.count({ where: { taskId } });
    const before = await count();

    const tooMany = await gql(REPORT, { taskId, steps: Array.from({ length: 10_000 }, () => step) }, agent);
    expect(tooMany.errors?.[0]?.extensions?.code).toMatch(/BAD_USER_INPUT|PAYLOAD_TOO_LARGE/);
    const foreign = await gql(REPORT, { taskId, steps: [step] }, stranger);
    expect(foreign.errors?.[0]?.extensions?.code).toBe('NOT_FOUND');
    const notMine = await gql(REPORT, { taskId, steps: [step] }, otherAgent);
    expect(notMine.errors?.[0]?.extensions?.code).toBe('FORBIDDEN');
    const inconsistent = await gql(REPORT, { taskId, steps: [{ ...step, cachedInputTokens: 4 }] }, agent);
    expect(inconsistent.errors?.[0]?.extensions?.code).toBe('BAD_USER_INPUT');
    expect(await count()).toBe(before);

    await ok(REPORT, { taskId, steps: [step, step] }, agent);
    const mismatch = await gql(COMPLETE, { id: taskId, input: { tokensUsed: 10, costUsd: 0.00003 } }, agent);
    expect(mismatch.errors?.[0]?.extensions).toMatchObject({
      code: 'BAD_USER_INPUT',
      reason: 'costs_do_not_add_up',
      reportedCostUsd: 0.00003,
      stepsCostUsd: 0.00002,
    });
    const task = await t.db.prisma.task.findUniqueOrThrow({ where: { id: taskId } });
    expect(task.status).toBe('running');
    expect(task.costUsd).toBeNull();
    expect(await count()).toBe(before + 2);

    const done = await ok(COMPLETE, { id: taskId, input: { tokensUsed: 10, costUsd: 0.00002 } }, agent);
    expect(done.completeTask).toMatchObject({ status: 'completed', costUsd: 0.00002, tokensUsed: 10 });
    const deleteRunning = await gql(
      'mutation($id: ID!) { deleteTask(id: $id) { ids } }',
      { id: taskId },
      agent,
    );
    expect(deleteRunning.errors?.[0]?.extensions?.code).toBe('FORBIDDEN');
  });

  it('records the model calls a completion carries before it, in its statement, with one event', async () => {
    const { chairman, agent } = await company();
    const taskId = await queueTask(t, chairman, 'cfo', 'work');
    await ok(CLAIM, { role: 'cfo' }, agent);
    const step = { model: 'm', durationMs: 1, inputTokens: 3, outputTokens: 2, costUsd: 0.00001 };
    await ok(REPORT, { taskId, steps: [step, step] }, agent);
    const bus = await watchBus(t, 'TASK_STEPS_RECORDED', chairman.tenantId);

    const done = await ok(
      COMPLETE,
      {
        id: taskId,
        input: { tokensUsed: 20, costUsd: 0.00004, steps: [step, { ...step, finishReason: 'stop' }] },
      },
      agent,
    );
    expect(done.completeTask).toMatchObject({ status: 'completed', costUsd: 0.00004, tokensUsed: 20 });
    // (The claim's and the report's own events, last seq 1 and 3, may reach the watch first.)
    const event = await bus.next((payload) => payload.task_id === taskId && Number(payload.last_seq) > 3);
    await bus.close();
    expect(event.payload.last_seq).toBe(6);
    const steps = (await ok(RUN, { id: taskId }, chairman)).task.steps.nodes;
    expect(steps.map((row: any) => [row.seq, row.kind, row.source, row.costUsdText, row.charged])).toEqual([
      [1, 'claimed', 'gateway', '0.000000', false],
      [2, 'model_call', 'agent', '0.000010', true],
      [3, 'model_call', 'agent', '0.000010', true],
      [4, 'model_call', 'agent', '0.000010', true],
      [5, 'model_call', 'agent', '0.000010', true],
      [6, 'completed', 'gateway', '0.000000', true],
    ]);
    expect(steps[4]).toMatchObject({ finishReason: 'stop', tokens: 5, content: null });
    expect(
      await t.db.prisma.outboxEvent.count({
        where: { type: 'TASK_STEPS_RECORDED', payload: { path: ['task_id'], equals: taskId } },
      }),
    ).toBe(3);
  });

  it('refuses a completion whose carried model calls are bad or do not add up, and records none of them', async () => {
    const { chairman, agent } = await company();
    const otherAgent = await t.caller(['agent'], { tenantId: chairman.tenantId });
    const stranger = await t.caller(['agent']);
    const taskId = await queueTask(t, chairman, 'cfo', 'work');
    await ok(CLAIM, { role: 'cfo' }, agent);
    const step = { model: 'm', durationMs: 1, inputTokens: 3, outputTokens: 2, costUsd: 0.00001 };
    await ok(REPORT, { taskId, steps: [step] }, agent);
    const count = () => t.db.prisma.taskStep.count({ where: { taskId } });
    const events = () => t.db.prisma.outboxEvent.count({ where: { tenantId: chairman.tenantId } });
    const [stepsBefore, eventsBefore] = [await count(), await events()];
    const complete = (input: Record<string, unknown>, caller: Caller = agent) =>
      gql(COMPLETE, { id: taskId, input: { tokensUsed: 10, costUsd: 0.00002, ...input } }, caller);

    // The one reported before and the one carried: $0.00002 and 10 tokens, not $0.00003.
    const mismatch = await complete({ costUsd: 0.00003, steps: [step] });
    expect(mismatch.errors?.[0]?.extensions).toMatchObject({
      code: 'BAD_USER_INPUT',
      reason: 'costs_do_not_add_up',
      reportedCostUsd: 0.00003,
      stepsCostUsd: 0.00002,
      stepsTokens: 10,
    });
    const tokens = await complete({ tokensUsed: 11, usage: null, steps: [step] });
    expect(tokens.errors?.[0]?.extensions).toMatchObject({ reason: 'costs_do_not_add_up', stepsTokens: 10 });
    const tooMany = await complete({ steps: Array.from({ length: 501 }, () => step) });
    expect(tooMany.errors?.[0]?.extensions?.code).toBe('BAD_USER_INPUT');
    expect(tooMany.errors?.[0]?.message).toMatch(/steps/);
    const inconsistent = await complete({ steps: [{ ...step, reasoningTokens: 3 }] });
    expect(inconsistent.errors?.[0]?.extensions?.code).toBe('BAD_USER_INPUT');
    expect(inconsistent.errors?.[0]?.message).toMatch(/reasoningTokens/);
    const foreign = await complete({ steps: [step] }, stranger);
    expect(foreign.errors?.[0]?.extensions?.code).toBe('NOT_FOUND');
    const notMine = await complete({ steps: [step] }, otherAgent);
    expect(notMine.errors?.[0]?.extensions?.code).toBe('FORBIDDEN');

    expect(await count()).toBe(stepsBefore);
    expect(await events()).toBe(eventsBefore);
    const task = await t.db.prisma.task.findUniqueOrThrow({ where: { id: taskId } });
    expect(task).toMatchObject({ status: 'running', costUsd: null, tokensUsed: null });

    // Over MCP, complete_task carries them as report_steps takes them.
    const client = await connectMcp(server, agent);
    const completed = await callTool(client, 'complete_task', {
      taskId,
      tokensUsed: 10,
      costUsd: 0.00002,
      steps: [step],
    });
    await client.close();
    expect(completed.structuredContent.completeTask).toMatchObject({ status: 'completed', costUsd: 0.00002 });
    expect(await count()).toBe(stepsBefore + 2);
  });

  it('reads only the step fields a query selects, through fragments, aliases and @include', async () => {
    const { chairman, agent } = await company();
    const taskId = await queueTask(t, chairman, 'cfo', 'work');
    await ok(CLAIM, { role: 'cfo' }, agent);
    const step = { model: 'm', durationMs: 7, inputTokens: 3, outputTokens: 2, costUsd: 0.000012 };
    await ok(REPORT, { taskId, steps: [step] }, agent);

    const read = await ok(
      `query Read($id: ID!, $withModel: Boolean!) {
        task(id: $id) { steps { nodes { ...Kind exact: costUsdText model @include(if: $withModel) } } }
      }
      fragment Kind on TaskStep { seq kind ... on TaskStep { durationMs } }`,
      { id: taskId, withModel: false },
      chairman,
    );
    expect(read.task.steps.nodes).toEqual([
      { seq: 1, kind: 'claimed', durationMs: null, exact: '0.000000' },
      { seq: 2, kind: 'model_call', durationMs: 7, exact: '0.000012' },
    ]);
    const withModel = await ok(
      `query Read($id: ID!) { task(id: $id) { steps { nodes { model @include(if: true) charged } } } }`,
      { id: taskId },
      chairman,
    );
    expect(withModel.task.steps.nodes).toEqual([
      { model: null, charged: false },
      { model: 'm', charged: false },
    ]);

    // What the database is asked for: the seq and the fields named, nothing else.
    const page = await readTaskSteps(t.db.prisma, taskId, {
      first: 10,
      afterSeq: 0,
      fields: new Set(['kind']),
    });
    expect(page.nodes).toEqual([
      { seq: 1, kind: 'claimed' },
      { seq: 2, kind: 'model_call' },
    ]);
    const whole = await readTaskSteps(t.db.prisma, taskId, { first: 10, afterSeq: 0 });
    expect(Object.keys(whole.nodes[1] ?? {})).toHaveLength(28);
    expect(whole.nodes[1]?.startedAt).toBeInstanceOf(Date);
  });

  it('records a lapsed lease as the end of its attempt, whose reported calls the next attempt does not charge', async () => {
    const { chairman, agent } = await company();
    const taskId = await queueTask(t, chairman, 'cfo', 'work');
    await ok(CLAIM, { role: 'cfo' }, agent);
    const step = (costUsd: number) => ({
      model: 'test-model',
      durationMs: 5,
      inputTokens: 3,
      outputTokens: 2,
      costUsd,
    });
    await ok(REPORT, { taskId, steps: [step(0.00004)] }, agent);
    // The runtime stops renewing: its lease lapses and the sweeper takes the task back.
    await t.db.prisma.task.update({
      where: { id: taskId },
      data: { leaseExpiresAt: new Date(Date.now() - 1000) },
    });
    await sweepExpiredLeases(t.db.prisma);
    // The first attempt's agent can no longer report for it.
    const late = await gql(REPORT, { taskId, steps: [step(0.00001)] }, agent);
    expect(late.errors?.[0]?.extensions?.code).toBe('CONFLICT');

    await ok(CLAIM, { role: 'cfo' }, agent);
    await ok(REPORT, { taskId, steps: [step(0.00003)] }, agent);
    await ok(COMPLETE, { id: taskId, input: { tokensUsed: 5, costUsd: 0.00003 } }, agent);

    const { task } = await ok(RUN, { id: taskId }, chairman);
    expect(
      task.steps.nodes.map((s: Record<string, unknown>) => [
        s.seq,
        s.attempt,
        s.kind,
        s.source,
        s.charged,
        s.costUsd,
      ]),
    ).toEqual([
      [1, 1, 'claimed', 'gateway', false, 0],
      [2, 1, 'model_call', 'agent', false, 0.00004],
      [3, 1, 'lease_expired', 'gateway', false, 0],
      [4, 2, 'claimed', 'gateway', false, 0],
      [5, 2, 'model_call', 'agent', true, 0.00003],
      [6, 2, 'completed', 'gateway', true, 0],
    ]);
    expect(task.steps.nodes[2]).toMatchObject({
      outcome: 'pending',
      reason: 'the lease lapsed without a renewal',
    });
    // The charged steps add up to the task's cost; the lapsed attempt's call is recorded, never charged.
    expect(task.costUsd).toBe(0.00003);
  });

  it('announces each recording once with the last seq: a connector call, an MCP report, a lapsed lease', async () => {
    const { chairman, agent } = await company();
    const connectorId = await ledger(chairman);
    const taskId = await queueTask(t, chairman, 'cfo', 'work');
    await ok(CLAIM, { role: 'cfo' }, agent);
    const bus = await watchBus(t, 'TASK_STEPS_RECORDED', chairman.tenantId);
    const seqs: unknown[] = [];
    const next = async () => {
      const event = await bus.next((payload) => payload.task_id === taskId && payload.last_seq !== 1);
      seqs.push(event.payload.last_seq);
    };

    await ok(
      `mutation Call($id: ID!, $taskId: ID!) {
        invokeConnector(id: $id, endpoint: { method: "GET", path: "/invoices" }, taskId: $taskId) { __typename }
      }`,
      { id: connectorId, taskId },
      agent,
    );
    await next();
    const client = await connectMcp(server, agent);
    const step = { model: 'm', durationMs: 1, inputTokens: 3, outputTokens: 2, costUsd: 0.00001 };
    await callTool(client, 'report_steps', { taskId, steps: [step, step, step] });
    await client.close();
    await next();
    await t.db.prisma.task.update({
      where: { id: taskId },
      data: { leaseExpiresAt: new Date(Date.now() - 1000) },
    });
    await sweepExpiredLeases(t.db.prisma);
    await next();
    await bus.close();

    expect(seqs).toEqual([2, 5, 6]);
    const kinds = await t.db.prisma.taskStep.findMany({ where: { taskId }, orderBy: { seq: 'asc' } });
    expect(kinds.map((row) => row.kind)).toEqual([
      'claimed',
      'connector_call',
      'model_call',
      'model_call',
      'model_call',
      'lease_expired',
    ]);
  });

  it('offers report_steps over MCP with the same rules', async () => {
    const { chairman, agent } = await company();
    const stranger = await t.caller(['agent']);
    const taskId = await queueTask(t, chairman, 'cfo', 'work');
    await ok(CLAIM, { role: 'cfo' }, agent);
    const step = { model: 'm', durationMs: 1, inputTokens: 3, outputTokens: 2, costUsd: 0.00001 };
    const client = await connectMcp(server, agent);
    const reported = await callTool(client, 'report_steps', { taskId, steps: [step] });
    expect(reported.structuredContent.reportTaskSteps).toEqual({
      taskId,
      attempt: 1,
      firstSeq: 2,
      lastSeq: 2,
      recorded: 1,
    });
    await expect(callTool(client, 'report_steps', { taskId, steps: [] })).rejects.toThrow(
      /steps: List should have at least 1 item/,
    );
    await client.close();
    const other = await connectMcp(server, stranger);
    const refused = await callTool(other, 'report_steps', { taskId, steps: [step] });
    expect(refused.isError).toBe(true);
    expect(refused.structuredContent.error.code).toBe('NOT_FOUND');
    await other.close();
    expect(await t.db.prisma.taskStep.count({ where: { taskId } })).toBe(2);
  });
});
