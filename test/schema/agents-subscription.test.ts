import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunningServer } from '../../src/server.js';
import type { TestApp } from '../support/app.js';
import { withTestApp } from '../support/fixtures.js';
import { listen, subscribe } from '../support/ws.js';
import {
  ClaimTask,
  CompleteTask,
  FailTask,
  memberAndAgent,
  queueTask,
  TaskUpdated,
  watchBus,
} from './agents-support.js';

let t: TestApp;

withTestApp((app) => (t = app));

const tenant = () => memberAndAgent(t);

describe('TASK_UPDATED on the bus', () => {
  it('announces a task queued by a chat message as pending', async () => {
    const { member } = await tenant();
    const bus = await watchBus(t, 'TASK_UPDATED', member.tenantId);

    const id = await queueTask(t, member, 'ceo');

    const event = await bus.next();
    expect(event.payload).toMatchObject({
      task_id: id,
      role: 'ceo',
      status: 'pending',
      attempts: 0,
      tenant_id: member.tenantId,
    });
    expect(event.payload).not.toHaveProperty('message');
    await bus.close();
  });

  it('announces a claim, then the completion', async () => {
    const { member, agent } = await tenant();
    const id = await queueTask(t, member, 'cfo');
    const bus = await watchBus(t, 'TASK_UPDATED', member.tenantId);

    await t.graphql(ClaimTask, { role: 'cfo' }, agent);
    await t.graphql(
      CompleteTask,
      { id, input: { tokensUsed: 5, costUsd: 0.01, output: 'secret output' } },
      agent,
    );

    expect((await bus.next((event) => event.status !== 'pending')).payload).toMatchObject({
      task_id: id,
      status: 'running',
      attempts: 1,
    });
    const completed = await bus.next();
    expect(completed.payload).toMatchObject({ task_id: id, status: 'completed' });
    expect(JSON.stringify(completed.payload)).not.toContain('secret output');
    await bus.close();
  });

  it('announces a failure', async () => {
    const { member, agent } = await tenant();
    const id = await queueTask(t, member, 'cmo');
    await t.graphql(ClaimTask, { role: 'cmo' }, agent);
    const bus = await watchBus(t, 'TASK_UPDATED', member.tenantId);

    await t.graphql(FailTask, { id, error: 'quota exhausted' }, agent);

    // The queueing's and the claim's events may still be on their way from the outbox.
    const failed = await bus.next((event) => event.status !== 'pending' && event.status !== 'running');
    expect(failed.payload).toMatchObject({
      task_id: id,
      status: 'failed',
    });
    await bus.close();
  });

  it('announces a task whose lease lapsed going back to the queue', async () => {
    const { member, agent } = await tenant();
    const id = await queueTask(t, member, 'cto');
    await t.graphql(ClaimTask, { role: 'cto' }, agent);
    await t.db.prisma.task.update({ where: { id }, data: { leaseExpiresAt: new Date(Date.now() - 1000) } });
    const bus = await watchBus(t, 'TASK_UPDATED', member.tenantId);

    await t.graphql(ClaimTask, { role: 'cto' }, agent);

    // The first claim's event may still be on its way.
    const lapsed = await bus.next((event) => event.status === 'pending' && event.attempts === 1);
    expect(lapsed.payload).toMatchObject({ task_id: id });
    expect((await bus.next()).payload).toMatchObject({ task_id: id, status: 'running', attempts: 2 });
    await bus.close();
  });

  it('delivers nothing of one tenant to another', async () => {
    const first = await tenant();
    const second = await tenant();
    const bus = await watchBus(t, 'TASK_UPDATED', second.member.tenantId);

    await queueTask(t, first.member, 'ceo');
    const own = await queueTask(t, second.member, 'ceo');

    expect((await bus.next()).payload).toMatchObject({ task_id: own, tenant_id: second.member.tenantId });
    await bus.close();
  });
});

describe('taskUpdated subscription', () => {
  let server: RunningServer;
  beforeAll(async () => {
    server = await listen(t);
  });
  afterAll(() => server.close());

  it('delivers the changes of the subscribed role in the subscriber’s tenant', async () => {
    const { member, agent } = await tenant();
    const subscription = await subscribe(server.url, member, TaskUpdated, { role: 'CFO' });

    await queueTask(t, member, 'ceo');
    const id = await queueTask(t, member, 'cfo');
    await t.graphql(ClaimTask, { role: 'cfo' }, agent);

    const queued = await subscription.next();
    expect(queued.data?.taskUpdated).toMatchObject({
      taskId: id,
      role: 'cfo',
      status: 'pending',
      tenantId: member.tenantId,
    });
    expect((await subscription.next()).data?.taskUpdated).toMatchObject({
      taskId: id,
      status: 'running',
      attempts: 1,
      task: { id, status: 'running' },
    });
    await subscription.close();
  });

  it('delivers only the changes of the subscribed task', async () => {
    const { member, agent } = await tenant();
    const first = await queueTask(t, member, 'cfo');
    const second = await queueTask(t, member, 'cfo');
    const subscription = await subscribe(server.url, member, TaskUpdated, { taskId: second });

    const claims = [await t.graphql(ClaimTask, { role: 'cfo' }, agent)];
    claims.push(await t.graphql(ClaimTask, { role: 'cfo' }, agent));
    expect(claims.map((claim) => claim.data?.claimTask?.id)).toEqual([first, second]);

    expect((await subscription.next()).data?.taskUpdated).toMatchObject({
      taskId: second,
      status: 'running',
    });
    await subscription.close();
  });
});
