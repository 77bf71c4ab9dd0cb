import { describe, expect, it } from 'vitest';
import { MAX_DELEGATION_DEPTH, MAX_DELEGATIONS } from '../../src/domain/agents/delegation.js';
import { sweepExpiredLeases } from '../../src/domain/agents/lease-sweeper.js';
import type { TestApp } from '../support/app.js';
import { withTwoTestApps } from '../support/fixtures.js';
import { setBudget } from './agents-budgets-support.js';
import {
  CANCEL,
  claim,
  company,
  complete,
  delegate,
  FAIL,
  ok,
  REGISTER,
  SET_REPORTING,
  TASK,
  type TaskView,
  tenantRows,
} from './agents-delegation-support.js';
import { queueTask } from './agents-support.js';

// Two instances on one database: the CEO's runtime talks to one, the others' to the other.
let a: TestApp;
let b: TestApp;
withTwoTestApps((apps) => ({ a, b } = apps));

const readTask = async (t: TestApp, caller: Parameters<typeof ok>[3], id: string) =>
  (await ok(t, TASK, { id }, caller)).task as TaskView & {
    treeCost: { costUsd: number; tokensUsed: number };
    children: TaskView[];
  };

describe('delegation', () => {
  it('a CEO task hands work to the CFO and the CLO, waits, and resumes with both outputs; costs roll up exactly', async () => {
    const { chairman, member, agent, tenantId } = await company(a);
    await setBudget(a, chairman, { period: 'month', limitUsd: '100', estimateUsd: '1' });
    const rootId = await queueTask(a, member, 'ceo', 'What do finance and legal say about the acquisition?');

    const root = await claim(a, agent, 'ceo');
    expect(root.id).toBe(rootId);
    expect(root.delegationTargets).toEqual(['cfo', 'chro', 'clo', 'cmo', 'coo', 'cpo', 'cto']);
    const delegated = await delegate(
      a,
      agent,
      rootId,
      [
        { role: 'cfo', message: 'Cash impact of the acquisition?', costCapUsd: 5 },
        { role: 'clo', message: 'Legal risks of the acquisition?' },
      ],
      { tokensUsed: 120, costUsd: 0.123456 },
    );
    expect(delegated.errors).toBeUndefined();
    const { parent, children } = delegated.data.delegateTask;
    expect(parent).toMatchObject({ id: rootId, status: 'waiting', claimedBy: null, resumeOn: 'ALL_ENDED' });
    expect(parent.attempts).toBe(0);
    expect(
      children.map((child: TaskView) => [child.role, child.status, child.depth, child.parentTaskId]),
    ).toEqual([
      ['cfo', 'pending', 1, rootId],
      ['clo', 'pending', 1, rootId],
    ]);
    expect(children[0]).toMatchObject({ rootTaskId: rootId, roleChain: ['ceo'], costCapUsd: 5 });
    // A waiting task is not handed out again.
    expect(
      (await ok(b, `mutation { claimNextTask(role: "ceo") { outcome } }`, {}, agent)).claimNextTask.outcome,
    ).toBe('queue_empty');

    // The CFO's and the CLO's runtimes work on the other instance.
    const cfo = await claim(b, agent, 'cfo');
    await complete(b, agent, cfo.id, 'Cash stays above the covenant.', 1.25, 400);
    expect((await readTask(a, chairman, rootId)).status).toBe('waiting');
    const clo = await claim(b, agent, 'clo');
    await complete(b, agent, clo.id, 'Two open antitrust questions.', 0.75, 300);

    const resumed = await claim(a, agent, 'ceo');
    expect(resumed.id).toBe(rootId);
    expect(resumed.children.map((child) => [child.role, child.status, child.output])).toEqual([
      ['cfo', 'completed', 'Cash stays above the covenant.'],
      ['clo', 'completed', 'Two open antitrust questions.'],
    ]);
    const done = await complete(a, agent, rootId, 'Go, with two legal caveats.', 0.3, 80);
    expect(done.completeTask).toMatchObject({ status: 'completed', costUsd: 0.423456, tokensUsed: 200 });

    const read = await readTask(a, member, rootId);
    expect(read.treeCost).toEqual({ costUsd: 2.423456, tokensUsed: 900 });
    const budget = await ok(a, `{ budget { spentUsd reservedUsd } }`, {}, chairman);
    expect(budget.budget).toEqual({ spentUsd: '2.423456', reservedUsd: '0' });
    const events = await a.db.prisma.outboxEvent.findMany({
      where: { tenantId, type: 'TASK_UPDATED' },
      orderBy: { seq: 'asc' },
    });
    const rootEvents = events
      .map((event) => event.payload as Record<string, unknown>)
      .filter((payload) => payload.root_task_id === rootId);
    expect(
      rootEvents.filter((payload) => payload.task_id === rootId).map((payload) => payload.status),
    ).toEqual(['pending', 'running', 'waiting', 'pending', 'running', 'completed']);
    expect(rootEvents.find((payload) => payload.task_id === cfo.id)).toMatchObject({
      parent_task_id: rootId,
      root_task_id: rootId,
    });
  });

  it('resumes on the first failure when the parent asked so', async () => {
    const { member, agent } = await company(a);
    const rootId = await queueTask(a, member, 'ceo', 'Plan the launch');
    await claim(a, agent, 'ceo');
    const delegated = await delegate(
      a,
      agent,
      rootId,
      [
        { role: 'cmo', message: 'Campaign' },
        { role: 'cto', message: 'Readiness' },
      ],
      { resumeOn: 'FIRST_FAILURE' },
    );
    expect(delegated.errors).toBeUndefined();
    const cmo = await claim(b, agent, 'cmo');
    await ok(b, FAIL, { id: cmo.id, error: 'no budget for ads' }, agent);

    const resumed = await claim(a, agent, 'ceo');
    expect(resumed.id).toBe(rootId);
    expect(resumed.children.map((child) => child.status)).toEqual(['failed', 'pending']);
  });

  it('a lost wake is made good by the lease sweep', async () => {
    const { member, agent } = await company(a);
    const rootId = await queueTask(a, member, 'ceo', 'Quarterly plan');
    await claim(a, agent, 'ceo');
    const [child] = (await delegate(a, agent, rootId, [{ role: 'coo', message: 'Ops plan' }])).data
      .delegateTask.children;
    // The child ends without its parent being woken, as if the gateway stopped in between.
    await a.db.prisma.task.update({
      where: { id: child.id },
      data: { status: 'completed', finishedAt: new Date() },
    });
    expect((await readTask(a, member, rootId)).status).toBe('waiting');

    await sweepExpiredLeases(b.db.prisma);

    expect((await readTask(a, member, rootId)).status).toBe('pending');
  });

  it('refuses a cycle with the chain, writes no task, and trips the delegating role’s breaker', async () => {
    const { chairman, member, agent, tenantId } = await company(a);
    for (const role of ['cfo', 'clo'])
      await ok(a, SET_REPORTING, { role, input: { delegatesAcross: true } }, chairman);
    const rootId = await queueTask(a, member, 'ceo', 'Review the contract');
    await claim(a, agent, 'ceo');
    await delegate(a, agent, rootId, [{ role: 'cfo', message: 'Numbers' }]);
    const cfoTask = await claim(a, agent, 'cfo');
    expect(cfoTask.delegationTargets).toEqual(['chro', 'clo', 'cmo', 'coo', 'cpo', 'cto']);
    expect(
      (await delegate(a, agent, cfoTask.id, [{ role: 'clo', message: 'Terms' }])).errors,
    ).toBeUndefined();
    const cloTask = await claim(b, agent, 'clo');
    expect(cloTask.delegationTargets).not.toContain('cfo');
    const before = await tenantRows(a, tenantId);

    const refused = await delegate(b, agent, cloTask.id, [{ role: 'CFO', message: 'Numbers again' }]);

    expect(refused.status).toBe(422);
    expect(refused.errors?.[0]?.extensions).toMatchObject({
      code: 'BAD_USER_INPUT',
      reason: 'delegation_cycle',
      chain: ['ceo', 'cfo', 'clo', 'cfo'],
    });
    expect(refused.errors?.[0]?.message).toContain('ceo → cfo → clo → cfo');
    // The refusal writes nothing; then the delegating role's breaker trips (docs/breakers.md): its pause is
    // one audit row and one event.
    const after = await tenantRows(a, tenantId);
    expect(after.tasks).toEqual(before.tasks);
    expect(after).toMatchObject({ audit: before.audit + 1, events: before.events + 1 });
    expect(await a.db.prisma.agentRole.findFirstOrThrow({ where: { tenantId, role: 'clo' } })).toMatchObject({
      paused: true,
      pausedBy: 'breaker:delegation_cycle',
    });
  });

  it('refuses work up the chart, and across without the chairman’s leave', async () => {
    const { chairman, member, agent, tenantId } = await company(a);
    await ok(a, REGISTER, { input: { role: 'controller', reportsTo: 'cfo' } }, chairman);
    const cfoTaskId = await queueTask(a, member, 'cfo', 'Close the books');
    const task = await claim(a, agent, 'cfo');
    expect(task.id).toBe(cfoTaskId);
    expect(task.delegationTargets).toEqual(['controller']);
    const before = await tenantRows(a, tenantId);

    for (const role of ['ceo', 'clo']) {
      const refused = await delegate(a, agent, cfoTaskId, [{ role, message: 'Help' }]);
      expect(refused.errors?.[0]?.extensions).toMatchObject({
        code: 'BAD_USER_INPUT',
        reason: 'not_along_org_chart',
        targets: ['controller'],
      });
    }
    const unknown = await delegate(a, agent, cfoTaskId, [{ role: 'treasurer', message: 'Help' }]);
    expect(unknown.errors?.[0]?.extensions).toMatchObject({ code: 'BAD_USER_INPUT', reason: 'unknown_role' });
    expect(await tenantRows(a, tenantId)).toEqual(before);

    expect(
      (await delegate(a, agent, cfoTaskId, [{ role: 'controller', message: 'Reconcile' }])).errors,
    ).toBeUndefined();
    const controller = await claim(b, agent, 'controller');
    expect(controller).toMatchObject({ depth: 1, roleChain: ['cfo'] });
    expect(controller.rootTaskId).toBe(cfoTaskId);
  });

  it(`stops a chain at depth ${MAX_DELEGATION_DEPTH}, and refuses more than ${MAX_DELEGATIONS} sub-tasks at once`, async () => {
    const { chairman, member, agent, tenantId } = await company(a);
    const levels = Array.from({ length: MAX_DELEGATION_DEPTH + 1 }, (_, index) => `level${index + 1}`);
    for (const [index, role] of levels.entries()) {
      await ok(
        a,
        REGISTER,
        { input: { role, reportsTo: index === 0 ? 'ceo' : levels[index - 1] } },
        chairman,
      );
    }
    let taskId = await queueTask(a, member, 'ceo', 'Dig deeper');
    await claim(a, agent, 'ceo');
    for (const role of levels.slice(0, MAX_DELEGATION_DEPTH)) {
      expect((await delegate(a, agent, taskId, [{ role, message: 'Deeper' }])).errors).toBeUndefined();
      taskId = (await claim(b, agent, role)).id;
    }
    const before = await tenantRows(a, tenantId);

    const refused = await delegate(a, agent, taskId, [
      { role: levels[MAX_DELEGATION_DEPTH] ?? '', message: 'Deeper' },
    ]);
    expect(refused.errors?.[0]?.extensions).toMatchObject({
      code: 'BAD_USER_INPUT',
      reason: 'depth_limit',
      depth: MAX_DELEGATION_DEPTH + 1,
    });

    const flood = await a.graphql<any, Record<string, unknown>>(
      `mutation Flood($taskId: ID!, $input: DelegateTaskInput!) { delegateTask(taskId: $taskId, input: $input) { parent { id } } }`,
      {
        taskId,
        input: {
          delegations: Array.from({ length: 10_000 }, () => ({ role: 'level1', message: 'x' })),
          tokensUsed: 0,
          costUsd: 0,
        },
      },
      agent,
    );
    expect(flood.errors?.[0]?.extensions?.code).toBe('BAD_USER_INPUT');
    expect(await tenantRows(a, tenantId)).toEqual(before);
  });

  it('refuses caps above the room the parent’s budgets and cap leave, and negative caps', async () => {
    const { chairman, member, agent, tenantId } = await company(a);
    await setBudget(a, chairman, { role: 'ceo', period: 'day', limitUsd: '10', estimateUsd: '2' });
    const rootId = await queueTask(a, member, 'ceo', 'Budget the offsite');
    await claim(a, agent, 'ceo');
    const before = await tenantRows(a, tenantId);

    // $10 less $1 reported now (the $2 reservation is given back): $9 of room.
    const refused = await delegate(
      a,
      agent,
      rootId,
      [
        { role: 'cfo', message: 'Venue costs', costCapUsd: 5 },
        { role: 'coo', message: 'Logistics', costCapUsd: 4.5 },
      ],
      { costUsd: 1, tokensUsed: 10 },
    );
    expect(refused.errors?.[0]?.extensions).toMatchObject({
      code: 'BAD_USER_INPUT',
      reason: 'cap_exceeds_room',
      roomUsd: 9,
      requestedUsd: 9.5,
    });
    const negative = await delegate(a, agent, rootId, [{ role: 'cfo', message: 'Venue', costCapUsd: -1 }]);
    expect(negative.errors?.[0]?.extensions?.code).toBe('BAD_USER_INPUT');
    expect(await tenantRows(a, tenantId)).toEqual(before);

    const fits = await delegate(
      a,
      agent,
      rootId,
      [
        { role: 'cfo', message: 'Venue costs', costCapUsd: 5 },
        { role: 'coo', message: 'Logistics', costCapUsd: 4 },
      ],
      { costUsd: 1, tokensUsed: 10 },
    );
    expect(fits.errors).toBeUndefined();
    // The child's own cap bounds what it may pass down in turn.
    await ok(a, REGISTER, { input: { role: 'venues', reportsTo: 'cfo' } }, chairman);
    const cfo = await claim(b, agent, 'cfo');
    const over = await delegate(b, agent, cfo.id, [
      { role: 'venues', message: 'Shortlist', costCapUsd: 5.5 },
    ]);
    expect(over.errors?.[0]?.extensions).toMatchObject({ reason: 'cap_exceeds_room', roomUsd: 5 });
  });

  it('cancelling a task cancels everything under it that has not ended', async () => {
    const { chairman, member, agent, tenantId } = await company(a);
    await ok(a, REGISTER, { input: { role: 'controller', reportsTo: 'cfo' } }, chairman);
    const rootId = await queueTask(a, member, 'ceo', 'Prepare the audit');
    await claim(a, agent, 'ceo');
    await delegate(a, agent, rootId, [
      { role: 'cfo', message: 'Ledgers' },
      { role: 'clo', message: 'Contracts' },
    ]);
    const cfo = await claim(b, agent, 'cfo');
    await delegate(b, agent, cfo.id, [{ role: 'controller', message: 'Reconcile' }]);
    const controller = await claim(a, agent, 'controller');

    const cancelled = await ok(b, CANCEL, { id: rootId, reason: 'audit moved' }, chairman);

    expect(cancelled.cancelTask.status).toBe('cancelled');
    const tasks = await a.db.prisma.task.findMany({ where: { tenantId } });
    expect(tasks.map((task) => task.status)).toEqual(['cancelled', 'cancelled', 'cancelled', 'cancelled']);
    // The controller's runtime is told when it reports.
    const late = await a.graphql<any, Record<string, unknown>>(
      `mutation Late($id: ID!) { completeTask(id: $id, input: { tokensUsed: 1, costUsd: 0.01 }) { id } }`,
      { id: controller.id },
      agent,
    );
    expect(late.errors?.[0]?.extensions?.code).toBe('CONFLICT');
    const audit = await a.db.prisma.auditEntry.findFirstOrThrow({
      where: { tenantId, action: 'task.cancel' },
    });
    expect((audit.details as { cascaded: string[] }).cascaded).toHaveLength(3);
    const again = await a.graphql<any, Record<string, unknown>>(CANCEL, { id: rootId }, chairman);
    expect(again.errors?.[0]?.extensions).toMatchObject({ code: 'CONFLICT', reason: 'task_ended' });
    const reservations = await a.db.prisma.budgetReservation.count({ where: { taskId: controller.id } });
    expect(reservations).toBe(0);
  });

  it('keeps every new field to its tenant', async () => {
    const { member, agent } = await company(a);
    const other = await company(b);
    const rootId = await queueTask(a, member, 'ceo', 'Secret plan');
    await claim(a, agent, 'ceo');
    const [child] = (await delegate(a, agent, rootId, [{ role: 'cfo', message: 'Secret numbers' }])).data
      .delegateTask.children;

    const foreignDelegate = await delegate(b, other.agent, rootId, [{ role: 'cfo', message: 'x' }]);
    expect(foreignDelegate.errors?.[0]?.extensions?.code).toBe('NOT_FOUND');
    for (const id of [rootId, child.id]) {
      expect((await ok(b, TASK, { id }, other.chairman)).task).toBeNull();
      const cancel = await b.graphql<any, Record<string, unknown>>(CANCEL, { id }, other.chairman);
      expect(cancel.errors?.[0]?.extensions?.code).toBe('NOT_FOUND');
    }
    const tasks = await ok(b, `{ tasks(first: 50) { nodes { id } } }`, {}, other.chairman);
    expect(tasks.tasks.nodes).toEqual([]);
    expect((await readTask(a, member, rootId)).status).toBe('waiting');
  });

  it('lets only the chairman, an operator or whoever queued a task cancel it', async () => {
    const { member, agent } = await company(a);
    const colleague = await a.caller(['member'], { tenantId: member.tenantId });
    const id = await queueTask(a, member, 'cto', 'Upgrade the database');

    const refused = await a.graphql<any, Record<string, unknown>>(CANCEL, { id }, colleague);
    expect(refused.errors?.[0]?.extensions?.code).toBe('FORBIDDEN');
    const byAgent = await a.graphql<any, Record<string, unknown>>(CANCEL, { id }, agent);
    expect(byAgent.errors?.[0]?.extensions?.code).toBe('FORBIDDEN');
    expect((await readTask(a, member, id)).status).toBe('pending');

    expect((await ok(a, CANCEL, { id }, member)).cancelTask.status).toBe('cancelled');
  });
});
