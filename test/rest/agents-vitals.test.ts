import { describe, expect, it } from 'vitest';
import { cacheTtlPerCoordinate } from '../../src/app.js';
import type { Prisma } from '../../src/generated/prisma/client.js';
import {
  ago,
  ClaimTask,
  CompleteTask,
  DecideRecommendation,
  HOUR,
  freshTenant as memberOfFreshTenant,
  queueTask,
  RecordOutcome,
  taskSeeder,
  AgentVitalsQuery as VitalsQuery,
} from '../schema/agents-support.js';
import type { Caller, TestApp } from '../support/app.js';
import { withTestApp } from '../support/fixtures.js';

let t: TestApp;

withTestApp((app) => (t = app));

const freshTenant = () => memberOfFreshTenant(t);
const { seedTask, completed } = taskSeeder(() => t);

const vitals = async (caller: Caller, role: string) => {
  const response = await t.rest('GET', `/api/v1/agents/${role}/vitals`, { caller });
  return response;
};

const failed = (tenantId: string, role: string, hoursAgo: number) =>
  seedTask(tenantId, role, {
    status: 'failed',
    attempts: 1,
    startedAt: ago(hoursAgo * HOUR + 5000),
    finishedAt: ago(hoursAgo * HOUR),
  });

function seedRecommendation(
  tenantId: string,
  taskId: string,
  role: string,
  data: Partial<Prisma.RecommendationUncheckedCreateInput>,
) {
  return t.db.prisma.recommendation.create({ data: { tenantId, taskId, role, summary: 'seeded', ...data } });
}

describe('GET /api/v1/agents/{role}/vitals', () => {
  it('answers zero counts and null rates for a role that did nothing, over the trailing 24 hours', async () => {
    const caller = await freshTenant();

    const response = await vitals(caller, 'ceo');

    expect(response.status).toBe(200);
    expect(response.body).toEqual({
      data: {
        agent_role: 'ceo',
        tasks_completed: 0,
        tasks_failed: 0,
        avg_execution_time_seconds: null,
        acceptance_rate: null,
        outcome_accuracy: null,
        tokens_used: 0,
        cost_usd: 0,
        period_start: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
        period_end: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
      },
    });
    expect(Date.parse(response.body.data.period_end) - Date.parse(response.body.data.period_start)).toBe(
      24 * HOUR,
    );
  });

  it('sums and averages only the role’s tasks that finished in the period, with the exact cost', async () => {
    const caller = await freshTenant();
    const { tenantId } = caller;
    await completed(tenantId, 'cfo', 1, 10, 100, '0.1');
    await completed(tenantId, 'cfo', 2, 20, 200, '0.2');
    await completed(tenantId, 'cfo', 3, 60, 700, '0.000001');
    await failed(tenantId, 'cfo', 1);
    await completed(tenantId, 'cfo', 25, 10, 9999, '9');
    await failed(tenantId, 'cfo', 25);
    await seedTask(tenantId, 'cfo', { status: 'pending' });
    await seedTask(tenantId, 'cfo', {
      status: 'running',
      attempts: 1,
      startedAt: ago(HOUR),
      leaseExpiresAt: ago(-HOUR),
    });
    await completed(tenantId, 'cto', 1, 10, 5000, '5');
    const other = await freshTenant();
    await completed(other.tenantId, 'cfo', 1, 10, 5000, '5');

    const { body } = await vitals(caller, 'cfo');

    expect(body.data).toMatchObject({
      agent_role: 'cfo',
      tasks_completed: 3,
      tasks_failed: 1,
      avg_execution_time_seconds: 30,
      tokens_used: 1000,
      cost_usd: 0.300001,
    });
  });

  it('rates decisions and outcomes recorded in the period', async () => {
    const caller = await freshTenant();
    const { tenantId } = caller;
    const task = await completed(tenantId, 'cmo', 30, 10, 1, '0');
    const recommend = (data: Partial<Prisma.RecommendationUncheckedCreateInput>) =>
      seedRecommendation(tenantId, task.id, 'cmo', data);
    await recommend({ accepted: true, decidedAt: ago(HOUR) });
    await recommend({ accepted: true, decidedAt: ago(2 * HOUR) });
    await recommend({
      accepted: false,
      decidedAt: ago(3 * HOUR),
      outcomeMatched: true,
      outcomeRecordedAt: ago(HOUR),
    });
    await recommend({
      accepted: false,
      decidedAt: ago(30 * HOUR),
      outcomeMatched: true,
      outcomeRecordedAt: ago(26 * HOUR),
    });
    await recommend({ predictedOutcome: 'x', outcomeMatched: false, outcomeRecordedAt: ago(2 * HOUR) });
    await recommend({});

    const { body } = await vitals(caller, 'cmo');

    expect(body.data).toMatchObject({ acceptance_rate: 2 / 3, outcome_accuracy: 0.5, tasks_completed: 0 });
  });

  it('answers a null average when only failed tasks finished', async () => {
    const caller = await freshTenant();
    await failed(caller.tenantId, 'coo', 1);
    await failed(caller.tenantId, 'coo', 2);

    const { body } = await vitals(caller, 'coo');

    expect(body.data).toMatchObject({
      tasks_completed: 0,
      tasks_failed: 2,
      avg_execution_time_seconds: null,
      tokens_used: 0,
      cost_usd: 0,
    });
  });

  it('answers a null acceptance rate when recommendations exist but none was decided', async () => {
    const caller = await freshTenant();
    const task = await completed(caller.tenantId, 'cpo', 1, 5, 1, '0');
    await seedRecommendation(caller.tenantId, task.id, 'cpo', {
      predictedOutcome: 'NPS +5',
      outcomeMatched: true,
      outcomeRecordedAt: ago(HOUR),
    });

    const { body } = await vitals(caller, 'cpo');

    expect(body.data).toMatchObject({ acceptance_rate: null, outcome_accuracy: 1 });
  });

  it('answers a null outcome accuracy when decisions exist but no outcome was recorded', async () => {
    const caller = await freshTenant();
    const task = await completed(caller.tenantId, 'cpo', 1, 5, 1, '0');
    await seedRecommendation(caller.tenantId, task.id, 'cpo', { accepted: false, decidedAt: ago(HOUR) });

    const { body } = await vitals(caller, 'cpo');

    expect(body.data).toMatchObject({ acceptance_rate: 0, outcome_accuracy: null });
  });

  it('counts a task whose last lease lapsed as failed before any claim sweeps it', async () => {
    const caller = await freshTenant();
    const running = { status: 'running' as const, startedAt: ago(2 * HOUR), leaseExpiresAt: ago(HOUR) };
    await seedTask(caller.tenantId, 'clo', { ...running, attempts: 3 });
    await seedTask(caller.tenantId, 'clo', { ...running, attempts: 1 });

    const { body } = await vitals(caller, 'clo');

    expect(body.data).toMatchObject({ tasks_failed: 1, tasks_completed: 0 });
  });

  it('reflects work done through the queue and the recommendation decisions', async () => {
    const member = await freshTenant();
    const agent = await t.caller(['agent'], { tenantId: member.tenantId });
    const id = await queueTask(t, member, 'cto');
    await t.graphql(ClaimTask, { role: 'cto' }, agent);
    const done = await t.graphql(
      CompleteTask,
      {
        id,
        input: {
          tokensUsed: 4321,
          costUsd: 0.25,
          recommendations: [{ summary: 'Adopt Postgres 17', predictedOutcome: 'p99 −20%' }],
        },
      },
      agent,
    );
    const recommendation = done.data?.completeTask.recommendations[0]?.id as string;
    await t.graphql(DecideRecommendation, { id: recommendation, accepted: true }, member);
    await t.graphql(RecordOutcome, { id: recommendation, matched: true }, member);

    const { body } = await vitals(member, 'CTO');

    expect(body.data).toMatchObject({
      agent_role: 'cto',
      tasks_completed: 1,
      tasks_failed: 0,
      tokens_used: 4321,
      cost_usd: 0.25,
      acceptance_rate: 1,
      outcome_accuracy: 1,
    });
    expect(body.data.avg_execution_time_seconds).toBeGreaterThanOrEqual(0);
  });

  it('is answered the same through GraphQL', async () => {
    const caller = await freshTenant();
    await completed(caller.tenantId, 'ceo', 1, 12, 10, '0.5');

    const rest = await vitals(caller, 'ceo');
    const { data } = await t.graphql(
      VitalsQuery,
      { role: 'ceo' },
      await t.caller(['chairman'], { tenantId: caller.tenantId }),
    );

    expect(data?.agentVitals).toMatchObject({
      agentRole: 'ceo',
      tasksCompleted: rest.body.data.tasks_completed,
      avgExecutionTimeSeconds: 12,
      tokensUsed: 10,
      costUsd: 0.5,
    });
  });

  it('is cached for at most 2 seconds, well within the 5 seconds a finished task may take to show', () => {
    expect(cacheTtlPerCoordinate['Query.agentVitals']).toBe(2000);
  });

  it('answers 401 without a token', async () => {
    const response = await t.rest('GET', '/api/v1/agents/ceo/vitals');

    expect(response.status).toBe(401);
    expect(response.headers.get('www-authenticate')).toBe('Bearer');
  });

  it('answers 404 for a role the tenant does not have', async () => {
    const response = await vitals(await freshTenant(), 'cso');

    expect(response.status).toBe(404);
    expect(response.body).toMatchInlineSnapshot(`
      {
        "detail": "Unknown agent role 'cso'",
      }
    `);
  });

  it('answers 404 for a role only another tenant registered', async () => {
    const other = await freshTenant();
    await t.db.prisma.agentRole.create({ data: { tenantId: other.tenantId, role: 'treasury' } });

    expect((await vitals(await freshTenant(), 'treasury')).status).toBe(404);
  });

  it('answers 422 at ["path","role"] for a role no role could match', async () => {
    const response = await vitals(await freshTenant(), '9lives');

    expect(response.status).toBe(422);
    expect(
      response.body.detail.map(({ loc, type }: { loc: unknown[]; type: string }) => ({ loc, type })),
    ).toMatchInlineSnapshot(`
      [
        {
          "loc": [
            "path",
            "role",
          ],
          "type": "string_pattern_mismatch",
        },
      ]
    `);
  });
});

describe('token counts beyond 32 bits', () => {
  const TaskTokens = 'query($id: ID!) { task(id: $id) { tokensUsed } }';

  /** Queues, claims and completes one task of `role` with `tokensUsed` tokens, as an agent. */
  async function completeWith(tenantId: string, role: string, tokensUsed: number) {
    const user = await t.caller(['member'], { tenantId });
    const agent = await t.caller(['agent'], { tenantId });
    const id = await queueTask(t, user, role);
    const claimed = await t.graphql(ClaimTask, { role }, agent);
    expect(claimed.data?.claimTask?.id).toBe(id);
    return t.graphql(CompleteTask, { id, input: { tokensUsed, costUsd: 0.01 } }, agent);
  }

  it('sums three tasks of 2,000,000,000 tokens to exactly 6,000,000,000 in REST and GraphQL', async () => {
    const caller = await freshTenant();
    for (let round = 0; round < 3; round++) {
      const completed = await completeWith(caller.tenantId, 'cmo', 2_000_000_000);
      expect(completed.errors).toBeUndefined();
    }

    const rest = await vitals(caller, 'cmo');
    const gql = await t.graphql(VitalsQuery, { role: 'cmo' }, await t.caller(['operator'], caller));

    expect(rest.status).toBe(200);
    expect(rest.body.data).toMatchObject({ tasks_completed: 3, tokens_used: 6_000_000_000 });
    expect(gql.errors).toBeUndefined();
    expect(gql.data?.agentVitals.tokensUsed).toBe(6_000_000_000);
  });

  it('stores and reads back a task of 2^53 - 1 tokens exactly', async () => {
    const caller = await freshTenant();

    const completed = await completeWith(caller.tenantId, 'cto', Number.MAX_SAFE_INTEGER);

    expect(completed.errors).toBeUndefined();
    const id = completed.data?.completeTask.id;
    const read = await t.graphql(TaskTokens, { id }, await t.caller(['operator'], caller));
    expect(read.data).toEqual({ task: { tokensUsed: Number.MAX_SAFE_INTEGER } });
    const rest = await vitals(caller, 'cto');
    expect(rest.body.data.tokens_used).toBe(Number.MAX_SAFE_INTEGER);
  });

  it('refuses 2^53 tokens, which no JSON number carries exactly', async () => {
    const caller = await freshTenant();

    const completed = await completeWith(caller.tenantId, 'coo', 2 ** 53);

    expect(completed.errors?.[0]?.extensions?.code).not.toBe('INTERNAL_SERVER_ERROR');
    expect(completed.data ?? null).toBeNull();
    expect(await t.db.prisma.task.count({ where: { tenantId: caller.tenantId, status: 'completed' } })).toBe(
      0,
    );
  });
});
