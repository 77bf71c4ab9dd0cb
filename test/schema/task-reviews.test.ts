import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { graphql } from '../../src/generated/graphql/index.js';
import type { RunningServer } from '../../src/server.js';
import type { Caller, TestApp } from '../support/app.js';
import { withTestApp } from '../support/fixtures.js';
import { listen, subscribe } from '../support/ws.js';
import { AgentVitalsQuery, ClaimTask, memberAndAgent, queueTask, TaskUpdated } from './agents-support.js';
import { boundLine, claimRouted, routingTenant, VersionOutcomes } from './model-routing-support.js';

let t: TestApp;

withTestApp((app) => (t = app));

const SetPolicy = graphql(`
  mutation ReviewsSetPolicy($role: String!, $input: CompletionPolicyInput!) {
    setCompletionPolicy(role: $role, input: $input) {
      role
      requireDeliverable
      reviewerRole
    }
  }
`);

const Complete = graphql(`
  mutation ReviewsComplete($id: ID!, $input: CompleteTaskInput!) {
    completeTask(id: $id, input: $input) {
      id
      status
      costUsd
      finishedAt
      review {
        status
        reviewerRole
        requestedBy
        attempt
      }
    }
  }
`);

const Accept = graphql(`
  mutation ReviewsAccept($id: ID!, $note: String) {
    acceptTask(id: $id, note: $note) {
      id
      status
      attempts
      claimedBy
      finishedAt
      review {
        status
        decidedBy
        note
        outcome
      }
    }
  }
`);

const Reject = graphql(`
  mutation ReviewsReject($id: ID!, $reason: String!) {
    rejectTask(id: $id, reason: $reason) {
      id
      status
      attempts
      claimedBy
      finishedAt
      error
      review {
        status
        decidedBy
        note
        outcome
      }
    }
  }
`);

const ReadTask = graphql(`
  query ReviewsTask($id: ID!) {
    task(id: $id) {
      id
      status
      review {
        status
        reviewerRole
        note
      }
    }
  }
`);

const Reviews = graphql(`
  query ReviewsList($status: TaskReviewStatus) {
    taskReviews(status: $status) {
      nodes {
        taskId
        status
        reviewerRole
        task {
          id
          output
        }
      }
    }
  }
`);

const Counts = graphql(`
  query ReviewsCounts {
    taskCounts {
      completed
      inReview
    }
  }
`);

/**
 * A tenant whose cfo tasks need the ceo's acceptance: a member who chats, the cfo's agent runtime (unbound:
 * it works every role, the reviewer's too), the chairman, and an agent bound to the ceo role.
 */
async function reviewTenant() {
  const { member, agent } = await memberAndAgent(t);
  const chairman = await t.caller(['chairman'], { tenantId: member.tenantId });
  const reviewer = await t.caller(['agent'], { tenantId: member.tenantId, agentRoles: ['ceo'] });
  const set = await t.graphql(SetPolicy, { role: 'cfo', input: { reviewerRole: 'CEO' } }, chairman);
  expect(set.errors).toBeUndefined();
  expect(set.data?.setCompletionPolicy).toEqual({
    role: 'cfo',
    requireDeliverable: false,
    reviewerRole: 'ceo',
  });
  return { member, agent, chairman, reviewer };
}

async function claim(agent: Caller, id: string) {
  const claimed = await t.graphql(ClaimTask, { role: 'cfo' }, agent);
  expect(claimed.data?.claimTask?.id).toBe(id);
}

const complete = (agent: Caller, id: string) =>
  t.graphql(Complete, { id, input: { tokensUsed: 40, costUsd: 0.25, output: 'Q3: +4%' } }, agent);

/** A cfo task its agent completed, now in review. */
async function inReview() {
  const callers = await reviewTenant();
  const id = await queueTask(t, callers.member, 'cfo');
  await claim(callers.agent, id);
  const completed = await complete(callers.agent, id);
  expect(completed.errors).toBeUndefined();
  return { ...callers, id, completed: completed.data?.completeTask };
}

/** What a refused review must leave as it was. */
async function rowsOf(tenantId: string, id: string) {
  const prisma = t.db.prisma;
  return {
    task: await prisma.task.findUniqueOrThrow({ where: { id } }),
    reviews: await prisma.taskReview.findMany({ where: { tenantId }, orderBy: { id: 'asc' } }),
    outbox: await prisma.outboxEvent.count({ where: { tenantId } }),
    audit: await prisma.auditEntry.count({ where: { tenantId } }),
    steps: await prisma.taskStep.count({ where: { tenantId } }),
    outcomes: await prisma.modelVersionOutcome.count({ where: { tenantId } }),
  };
}

/** The statuses TASK_UPDATED announced for a task, in the order written. */
async function announced(tenantId: string, id: string) {
  const events = await t.db.prisma.outboxEvent.findMany({
    where: { tenantId, type: 'TASK_UPDATED' },
    orderBy: [{ createdAt: 'asc' }, { seq: 'asc' }],
  });
  return events
    .map((event) => event.payload as Record<string, unknown>)
    .filter((payload) => payload.task_id === id);
}

/** The cfo's vitals, read by a caller of its own (each caller is its own response-cache session). */
const vitals = async ({ tenantId }: Caller) =>
  (await t.graphql(AgentVitalsQuery, { role: 'cfo' }, await t.caller(['member'], { tenantId }))).data
    ?.agentVitals;

describe('a completion that needs a reviewer’s acceptance', () => {
  it('waits in_review, charged, and counts as completed in the vitals only once accepted', async () => {
    const { member, agent, reviewer, id, completed } = await inReview();

    expect(completed).toMatchObject({
      id,
      status: 'in_review',
      costUsd: 0.25,
      review: { status: 'pending', reviewerRole: 'ceo', requestedBy: agent.sub, attempt: 1 },
    });
    expect(completed?.finishedAt).not.toBeNull();
    expect(await vitals(member)).toMatchObject({ tasksCompleted: 0, tasksFailed: 0, costUsd: 0.25 });
    expect((await t.graphql(Counts, {}, member)).data?.taskCounts).toEqual({ completed: 0, inReview: 1 });
    const budgetsCharged = await t.db.prisma.taskStep.findMany({
      where: { taskId: id },
      orderBy: { seq: 'asc' },
      select: { kind: true, outcome: true, costUsd: true },
    });
    expect(budgetsCharged.map((step) => [step.kind, step.outcome])).toEqual([
      ['claimed', null],
      ['completed', 'in_review'],
      ['review_requested', null],
    ]);

    // The reviewer agent reads what it reviews, then accepts it.
    const listed = await t.graphql(Reviews, { status: 'pending' }, reviewer);
    expect(listed.data?.taskReviews.nodes).toEqual([
      { taskId: id, status: 'pending', reviewerRole: 'ceo', task: { id, output: 'Q3: +4%' } },
    ]);
    const accepted = await t.graphql(Accept, { id, note: 'Matches the ledger.' }, reviewer);

    expect(accepted.errors).toBeUndefined();
    expect(accepted.data?.acceptTask).toMatchObject({
      id,
      status: 'completed',
      attempts: 1,
      claimedBy: agent.sub,
      finishedAt: completed?.finishedAt,
      review: { status: 'accepted', decidedBy: reviewer.sub, note: 'Matches the ledger.', outcome: null },
    });
    expect(await vitals(member)).toMatchObject({ tasksCompleted: 1, tasksFailed: 0, costUsd: 0.25 });
    const counts = await t.graphql(Counts, {}, await t.caller(['member'], { tenantId: member.tenantId }));
    expect(counts.data?.taskCounts).toEqual({ completed: 1, inReview: 0 });
    expect((await announced(member.tenantId, id)).map((payload) => payload.status)).toEqual([
      'pending',
      'running',
      'in_review',
      'completed',
    ]);
    const last = (await announced(member.tenantId, id)).at(-1);
    expect(last).toMatchObject({
      task_id: id,
      role: 'cfo',
      status: 'completed',
      attempts: 1,
      root_task_id: id,
    });
    expect(JSON.stringify(last)).not.toContain('Matches the ledger');
    const steps = await t.db.prisma.taskStep.findMany({ where: { taskId: id }, orderBy: { seq: 'asc' } });
    expect(steps.at(-1)).toMatchObject({
      kind: 'review_accepted',
      actor: reviewer.sub,
      outcome: 'completed',
    });
    const audit = await t.db.prisma.auditEntry.findFirstOrThrow({
      where: { tenantId: member.tenantId, action: 'task.review.accept' },
    });
    expect(audit).toMatchObject({ actor: reviewer.sub, targetId: id, outcome: 'accepted' });
  });

  it('returns a rejected task to the queue with the reason, attempts kept, and fails it on its last attempt', async () => {
    const { member, agent, chairman, id } = await inReview();

    const rejected = await t.graphql(Reject, { id, reason: 'Berlin is missing.' }, member);

    expect(rejected.errors).toBeUndefined();
    expect(rejected.data?.rejectTask).toMatchObject({
      status: 'pending',
      attempts: 1,
      claimedBy: null,
      finishedAt: null,
      error: null,
      review: { status: 'rejected', decidedBy: member.sub, note: 'Berlin is missing.', outcome: 'pending' },
    });
    expect(await vitals(member)).toMatchObject({ tasksCompleted: 0, tasksFailed: 0 });
    // The next claim reads why.
    await claim(agent, id);
    const read = await t.graphql(ReadTask, { id }, agent);
    expect(read.data?.task).toMatchObject({
      status: 'running',
      review: { status: 'rejected', note: 'Berlin is missing.' },
    });
    expect((await complete(agent, id)).data?.completeTask).toMatchObject({
      status: 'in_review',
      costUsd: 0.5,
      review: { status: 'pending', attempt: 2 },
    });

    await t.db.prisma.task.update({ where: { id }, data: { attempts: 3 } });
    const failed = await t.graphql(Reject, { id, reason: 'Still missing.' }, chairman);

    expect(failed.data?.rejectTask).toMatchObject({
      status: 'failed',
      error: `rejected by ${chairman.sub}: Still missing.`,
      review: { status: 'rejected', outcome: 'failed' },
    });
    expect(failed.data?.rejectTask?.finishedAt).not.toBeNull();
    expect(await vitals(member)).toMatchObject({ tasksCompleted: 0, tasksFailed: 1, costUsd: 0.5 });
    expect((await announced(member.tenantId, id)).map((payload) => payload.status)).toEqual([
      'pending',
      'running',
      'in_review',
      'pending',
      'running',
      'in_review',
      'failed',
    ]);
    expect(
      await t.db.prisma.auditEntry.count({
        where: { tenantId: member.tenantId, action: 'task.review.reject' },
      }),
    ).toBe(2);
  });

  it('completes as before for a role without a reviewer, and a policy change leaves a review in progress alone', async () => {
    const { member, agent, chairman, reviewer, id } = await inReview();
    const cleared = await t.graphql(SetPolicy, { role: 'cfo', input: { reviewerRole: null } }, chairman);
    expect(cleared.data?.setCompletionPolicy?.reviewerRole).toBeNull();

    const other = await queueTask(t, member, 'cfo');
    await claim(agent, other);
    expect((await complete(agent, other)).data?.completeTask).toMatchObject({
      status: 'completed',
      review: null,
    });
    expect((await t.graphql(Accept, { id }, reviewer)).data?.acceptTask?.status).toBe('completed');
  });

  it('counts a task in its model version’s outcomes only once accepted', async () => {
    const tenant = await routingTenant(t);
    const { baseModel, production } = await boundLine(t, tenant, 'cfo');
    await t.graphql(SetPolicy, { role: 'cfo', input: { reviewerRole: 'ceo' } }, tenant.operator);
    const id = await queueTask(t, tenant.operator, 'cfo');
    expect((await claimRouted(t, tenant.agent, 'cfo')).task?.id).toBe(id);
    expect((await complete(tenant.agent, id)).data?.completeTask?.status).toBe('in_review');
    const outcomes = async () => {
      const reader = await t.caller(['operator'], { tenantId: tenant.tenantId });
      const read = await t.graphql(VersionOutcomes, { baseModel }, reader);
      return read.data?.modelVersions.find((version) => version.id === production)?.outcomes;
    };

    expect(await outcomes()).toMatchObject({ tasksCompleted: 0, tasksFailed: 0, tokensUsed: 0 });
    await t.graphql(Accept, { id }, tenant.operator);
    expect(await outcomes()).toMatchObject({
      tasksCompleted: 1,
      tasksFailed: 0,
      tokensUsed: 40,
      costUsd: 0.25,
    });
  });

  it('ends the review of a task cancelled while in review', async () => {
    const { chairman, id, completed } = await inReview();
    const CancelTask = graphql(`
      mutation ReviewsCancel($id: ID!) {
        cancelTask(id: $id) {
          status
          finishedAt
          review {
            status
          }
        }
      }
    `);
    const cancelled = await t.graphql(CancelTask, { id }, chairman);
    expect(cancelled.data?.cancelTask).toEqual({
      status: 'cancelled',
      finishedAt: completed?.finishedAt,
      review: { status: 'cancelled' },
    });
  });
});

describe('refused reviews change nothing', () => {
  it('refuses whoever may not decide it, and a task not in review', async () => {
    const { member, agent, reviewer, id } = await inReview();
    const tenantId = member.tenantId;
    const cfoAgent = await t.caller(['agent'], { tenantId, agentRoles: ['cfo'] });
    const cloAgent = await t.caller(['agent'], { tenantId, agentRoles: ['clo'] });
    const stranger = await t.caller(['chairman']);
    const before = await rowsOf(tenantId, id);

    const cases: [Caller | null, string, Record<string, unknown>][] = [
      [null, 'Not authenticated', { code: 'UNAUTHENTICATED' }],
      [stranger, `Task ${id} not found`, { code: 'NOT_FOUND' }],
      [cloAgent, `Task ${id} not found`, { code: 'NOT_FOUND' }],
      [
        cfoAgent,
        `Task ${id} is reviewed by the role 'ceo', which this token does not work for`,
        { code: 'FORBIDDEN', reason: 'not_reviewer', reviewerRole: 'ceo' },
      ],
      [
        agent,
        `The review of task ${id} was requested by you (${agent.sub}): someone else decides it`,
        {
          code: 'FORBIDDEN',
          reason: 'own_request',
        },
      ],
    ];
    for (const [caller, message, extensions] of cases) {
      for (const result of [
        await t.graphql(Accept, { id }, caller),
        await t.graphql(Reject, { id, reason: 'No.' }, caller),
      ]) {
        expect(result.errors?.[0]?.message, caller?.sub ?? 'anonymous').toContain(message);
        expect(result.errors?.[0]?.extensions).toMatchObject(extensions);
      }
    }
    const blank = await t.graphql(Reject, { id, reason: '  ' }, reviewer);
    expect(blank.errors?.[0]?.extensions?.code).toBe('BAD_USER_INPUT');
    expect(await rowsOf(tenantId, id)).toEqual(before);

    // Decided once: a second verdict is a conflict.
    expect((await t.graphql(Accept, { id }, reviewer)).errors).toBeUndefined();
    const decided = await rowsOf(tenantId, id);
    for (const result of [
      await t.graphql(Accept, { id }, member),
      await t.graphql(Reject, { id, reason: 'Too late.' }, member),
    ]) {
      expect(result.errors?.[0]?.message).toBe(`Task ${id} is completed, not in_review`);
      expect(result.errors?.[0]?.extensions).toMatchObject({
        code: 'CONFLICT',
        reason: 'task_not_in_review',
        status: 'completed',
      });
    }
    expect(await rowsOf(tenantId, id)).toEqual(decided);
  });

  it('refuses a reviewer that is no role of the tenant, or the role itself, and a caller other than the chairman', async () => {
    const { member, agent } = await memberAndAgent(t);
    const chairman = await t.caller(['chairman'], { tenantId: member.tenantId });
    const before = await t.db.prisma.agentRole.findMany({ where: { tenantId: member.tenantId } });
    const audit = await t.db.prisma.auditEntry.count({ where: { tenantId: member.tenantId } });

    const cases: [Caller, string, Record<string, unknown>][] = [
      [chairman, 'cfo', { code: 'BAD_USER_INPUT', reason: 'reviewer_is_role', role: 'cfo' }],
      [
        chairman,
        'nobody',
        { code: 'BAD_USER_INPUT', reason: 'unknown_reviewer_role', reviewerRole: 'nobody' },
      ],
      [member, 'ceo', { code: 'FORBIDDEN' }],
      [agent, 'ceo', { code: 'FORBIDDEN' }],
    ];
    for (const [caller, reviewerRole, extensions] of cases) {
      const result = await t.graphql(SetPolicy, { role: 'cfo', input: { reviewerRole } }, caller);
      expect(result.errors?.[0]?.extensions, reviewerRole).toMatchObject(extensions);
    }
    const unknown = await t.graphql(SetPolicy, { role: 'nobody', input: { reviewerRole: 'ceo' } }, chairman);
    expect(unknown.errors?.[0]?.extensions?.code).toBe('NOT_FOUND');
    expect(await t.db.prisma.agentRole.findMany({ where: { tenantId: member.tenantId } })).toEqual(before);
    expect(await t.db.prisma.auditEntry.count({ where: { tenantId: member.tenantId } })).toBe(audit);
  });

  it('shows another tenant none of a tenant’s reviews', async () => {
    const { id } = await inReview();
    const stranger = await t.caller(['chairman']);
    await t.app.services.tenants.ensure(stranger.tenantId);

    expect((await t.graphql(Reviews, {}, stranger)).data?.taskReviews.nodes).toEqual([]);
    expect((await t.graphql(ReadTask, { id }, stranger)).data?.task).toBeNull();
  });
});

describe('the taskUpdated subscription', () => {
  let server: RunningServer;
  beforeAll(async () => {
    server = await listen(t);
  });
  afterAll(() => server.close());

  it('delivers in_review, then completed once accepted', async () => {
    const callers = await reviewTenant();
    const subscription = await subscribe(server.url, callers.member, TaskUpdated, { role: 'cfo' });
    const id = await queueTask(t, callers.member, 'cfo');
    await claim(callers.agent, id);
    await complete(callers.agent, id);
    await t.graphql(Accept, { id }, callers.reviewer);

    const statuses = [];
    for (let seen = 0; seen < 4; seen += 1) statuses.push((await subscription.next()).data?.taskUpdated);
    expect(statuses.map((event) => [event?.taskId, event?.status])).toEqual([
      [id, 'pending'],
      [id, 'running'],
      [id, 'in_review'],
      [id, 'completed'],
    ]);
    await subscription.close();
  });
});

describe('REST', () => {
  it('accepts and rejects over POST /api/v1/tasks/{id}/accept and /reject, with idempotency keys', async () => {
    const first = await inReview();
    const headers = { 'Idempotency-Key': `"review-${first.id}"` };

    const accepted = await t.rest('POST', `/api/v1/tasks/${first.id}/accept`, {
      caller: first.chairman,
      body: { note: 'Fine.' },
      headers,
    });
    expect(accepted.status).toBe(200);
    expect(accepted.body.data).toMatchObject({
      id: first.id,
      role: 'cfo',
      status: 'completed',
      review: { status: 'accepted', reviewer_role: 'ceo', decided_by: first.chairman.sub, note: 'Fine.' },
    });
    const replayed = await t.rest('POST', `/api/v1/tasks/${first.id}/accept`, {
      caller: first.chairman,
      body: { note: 'Fine.' },
      headers,
    });
    expect(replayed.status).toBe(200);
    expect(replayed.headers.get('idempotent-replayed')).toBe('true');
    expect(replayed.body).toEqual(accepted.body);
    expect(
      await t.db.prisma.auditEntry.count({
        where: { tenantId: first.member.tenantId, action: 'task.review.accept' },
      }),
    ).toBe(1);

    const second = await inReview();
    const rejected = await t.rest('POST', `/api/v1/tasks/${second.id}/reject`, {
      caller: second.member,
      body: { reason: 'Redo.' },
    });
    expect(rejected.status).toBe(200);
    expect(rejected.body.data).toMatchObject({
      status: 'pending',
      finished_at: null,
      review: { status: 'rejected', note: 'Redo.', outcome: 'pending' },
    });

    const again = await t.rest('POST', `/api/v1/tasks/${second.id}/reject`, {
      caller: second.member,
      body: { reason: 'Redo.' },
    });
    expect(again.status).toBe(409);
    const missing = await t.rest('POST', `/api/v1/tasks/${second.id}/accept`, {
      caller: await t.caller(['chairman']),
      body: {},
    });
    expect(missing.status).toBe(404);
    const anonymous = await t.rest('POST', `/api/v1/tasks/${second.id}/accept`, { body: {} });
    expect(anonymous.status).toBe(401);
    const noReason = await t.rest('POST', `/api/v1/tasks/${second.id}/reject`, {
      caller: second.member,
      body: {},
    });
    expect(noReason.status).toBe(422);
  });
});
