import { describe, expect, it } from 'vitest';
import { sweepExpiredLeases } from '../../src/domain/agents/lease-sweeper.js';
import { DEFAULT_LEASE_MS, MAX_ATTEMPTS } from '../../src/domain/agents/queue.js';
import { PDF } from '../domain/agents/attachment-samples.js';
import type { Caller, TestApp } from '../support/app.js';
import { databaseKind } from '../support/database.js';
import { withTestApp } from '../support/fixtures.js';
import {
  ChatMutation,
  ClaimTask,
  CompleteTask,
  chat,
  FailTask,
  memberAndAgent,
  queueTask,
  TaskAttachmentData,
  TaskQuery,
} from './agents-support.js';

let t: TestApp;

withTestApp((app) => (t = app));

/** A tenant with a member who chats and an agent runtime. */
const tenant = () => memberAndAgent(t);

const claim = async (agent: Caller, role: string) =>
  (await t.graphql(ClaimTask, { role }, agent)).data?.claimTask ?? null;

/** Makes the lease of a running task lapse, as if its runtime had crashed. */
const expireLease = (id: string) =>
  t.db.prisma.task.update({ where: { id }, data: { leaseExpiresAt: new Date(Date.now() - 1000) } });

describe('claimTask', () => {
  it('hands the oldest pending task of the role to the calling agent under a 5-minute lease', async () => {
    const { member, agent } = await tenant();
    const first = await queueTask(t, member, 'cfo', 'first');
    await queueTask(t, member, 'cfo', 'second');
    await queueTask(t, member, 'cto', 'other role');

    const task = await claim(agent, 'CFO');

    expect(task).toMatchObject({
      id: first,
      role: 'cfo',
      status: 'running',
      attempts: 1,
      claimedBy: agent.sub,
      message: 'first',
    });
    const lease = Date.parse(task?.leaseExpiresAt ?? '') - Date.parse(task?.startedAt ?? '');
    expect(lease).toBe(DEFAULT_LEASE_MS);
  });

  it('answers null when nothing is pending', async () => {
    const { agent } = await tenant();

    expect(await claim(agent, 'ceo')).toBeNull();
  });

  it('answers NOT_FOUND for a role the tenant does not have', async () => {
    const { agent } = await tenant();

    const result = await t.graphql(ClaimTask, { role: 'cso' }, agent);

    expect(result.errors?.[0]?.extensions?.code).toBe('NOT_FOUND');
  });

  it('answers FORBIDDEN to a caller without the agent role', async () => {
    const { member } = await tenant();
    const chairman = await t.caller(['chairman', 'operator'], { tenantId: member.tenantId });

    const result = await t.graphql(ClaimTask, { role: 'ceo' }, chairman);

    expect(result.errors?.[0]?.extensions?.code).toBe('FORBIDDEN');
  });

  it('leaves tasks of a paused role queued, and hands them out once the role is resumed', async () => {
    const { member, agent } = await tenant();
    const id = await queueTask(t, member, 'coo');
    const where = { tenantId_role: { tenantId: member.tenantId, role: 'coo' } };
    await t.db.prisma.agentRole.update({ where, data: { paused: true, pausedAt: new Date() } });

    expect(await claim(agent, 'coo')).toBeNull();

    await t.db.prisma.agentRole.update({ where, data: { paused: false, resumedAt: new Date() } });
    expect((await claim(agent, 'coo'))?.id).toBe(id);
  });

  it('never hands out a task of another tenant', async () => {
    const { member } = await tenant();
    await queueTask(t, member, 'cmo');
    const stranger = await t.caller(['agent']);

    expect(await claim(stranger, 'cmo')).toBeNull();
  });

  it('gives the claiming agent the attachment bytes', async () => {
    const { member, agent } = await tenant();
    await chat(t, member, 'clo', {
      message: 'Review',
      attachments: [{ data: PDF.toString('base64'), mime_type: 'application/pdf', filename: 'nda.pdf' }],
    });

    const task = await claim(agent, 'clo');

    expect(task?.attachments).toEqual([
      expect.objectContaining({
        position: 0,
        mimeType: 'application/pdf',
        filename: 'nda.pdf',
        size: PDF.length,
        data: PDF.toString('base64'),
      }),
    ]);
  });

  it('keeps the attachment bytes from everyone but the agent running the task', async () => {
    const { member, agent } = await tenant();
    const sent = await t.graphql(
      ChatMutation,
      {
        role: 'clo',
        input: {
          message: 'Review',
          attachments: [{ data: PDF.toString('base64'), mimeType: 'application/pdf' }],
        },
      },
      member,
    );
    const id = sent.data?.sendChatMessage.taskId as string;
    await claim(agent, 'clo');
    const otherAgent = await t.caller(['agent'], { tenantId: member.tenantId });

    for (const caller of [member, otherAgent]) {
      const result = await t.graphql(TaskAttachmentData, { id }, caller);
      expect(result.errors?.[0]?.extensions?.code).toBe('FORBIDDEN');
    }
    expect((await t.graphql(TaskAttachmentData, { id }, agent)).data?.task?.attachments[0]?.data).toBe(
      PDF.toString('base64'),
    );
  });

  it(`hands each of 200 tasks to exactly one of two racing agents (${databaseKind})`, async () => {
    const { member } = await tenant();
    const agents = await Promise.all(
      ['one', 'two'].map((name) => t.caller(['agent'], { tenantId: member.tenantId, sub: `racer-${name}` })),
    );
    await t.db.prisma.task.createMany({
      data: Array.from({ length: 200 }, (_, index) => ({
        tenantId: member.tenantId,
        role: 'cpo',
        message: `task ${index}`,
        createdBy: member.sub,
      })),
    });

    const claimedBy = new Map<string, string[]>();
    const worker = async (agent: Caller) => {
      for (;;) {
        const task = await claim(agent, 'cpo');
        if (!task) return;
        claimedBy.set(task.id, [...(claimedBy.get(task.id) ?? []), agent.sub]);
      }
    };
    await Promise.all(agents.flatMap((agent) => Array.from({ length: 4 }, () => worker(agent))));

    expect(claimedBy.size).toBe(200);
    expect([...claimedBy.values()].filter((claimers) => claimers.length !== 1)).toEqual([]);
    const running = await t.db.prisma.task.groupBy({
      by: ['claimedBy'],
      where: { tenantId: member.tenantId },
      _count: true,
    });
    expect(running.reduce((sum, row) => sum + row._count, 0)).toBe(200);
    expect(
      await t.db.prisma.task.count({ where: { tenantId: member.tenantId, status: 'running', attempts: 1 } }),
    ).toBe(200);
  });
});

describe('leases', () => {
  it('return a task whose lease lapsed to the queue for another attempt', async () => {
    const { member, agent } = await tenant();
    const id = await queueTask(t, member, 'cto');
    await claim(agent, 'cto');
    await expireLease(id);
    const second = await t.caller(['agent'], { tenantId: member.tenantId });

    const task = await claim(second, 'cto');

    expect(task).toMatchObject({ id, status: 'running', attempts: 2, claimedBy: second.sub });
  });

  it('return a lapsed task to the queue by the background sweep, without any claim', async () => {
    const { member, agent } = await tenant();
    const id = await queueTask(t, member, 'cmo');
    await claim(agent, 'cmo');
    await expireLease(id);

    expect(await sweepExpiredLeases(t.db.prisma)).toBeGreaterThanOrEqual(1);

    const task = await t.db.prisma.task.findUniqueOrThrow({ where: { id } });
    expect(task).toMatchObject({ status: 'pending', leaseExpiresAt: null, claimedBy: null });
  });

  it(`fail a task when the lease of its attempt ${MAX_ATTEMPTS} lapses`, async () => {
    const { member, agent } = await tenant();
    const id = await queueTask(t, member, 'cto');
    for (let attempt = 1; attempt <= MAX_ATTEMPTS; attempt += 1) {
      expect((await claim(agent, 'cto'))?.attempts).toBe(attempt);
      await expireLease(id);
    }

    expect(await claim(agent, 'cto')).toBeNull();

    const { data } = await t.graphql(TaskQuery, { id }, member);
    expect(data?.task).toMatchObject({
      status: 'failed',
      attempts: 3,
      error: 'lease expired on the last of 3 attempts',
    });
    const row = await t.db.prisma.task.findUniqueOrThrow({ where: { id } });
    expect(row.finishedAt).not.toBeNull();
  });

  it('let the agent that still holds a lapsed lease complete the task before anyone reclaims it', async () => {
    const { member, agent } = await tenant();
    const id = await queueTask(t, member, 'cto');
    await claim(agent, 'cto');
    await expireLease(id);

    const result = await t.graphql(CompleteTask, { id, input: { tokensUsed: 10, costUsd: 0.01 } }, agent);

    expect(result.data?.completeTask.status).toBe('completed');
  });
});

describe('completeTask', () => {
  it('ends the task as completed with tokens, exact cost, output and recommendations', async () => {
    const { member, agent } = await tenant();
    const id = await queueTask(t, member, 'cfo');
    await claim(agent, 'cfo');

    const result = await t.graphql(
      CompleteTask,
      {
        id,
        input: {
          output: 'Cash runway is 18 months.',
          tokensUsed: 1234,
          costUsd: 0.0123456789,
          recommendations: [{ summary: 'Cut cloud spend by 10%', predictedOutcome: 'Runway +2 months' }],
        },
      },
      agent,
    );

    expect(result.data?.completeTask).toMatchObject({
      id,
      status: 'completed',
      tokensUsed: 1234,
      costUsd: 0.012346,
      output: 'Cash runway is 18 months.',
      leaseExpiresAt: null,
      recommendations: [
        { summary: 'Cut cloud spend by 10%', predictedOutcome: 'Runway +2 months', accepted: null },
      ],
    });
    expect(result.data?.completeTask.finishedAt).not.toBeNull();
    const row = await t.db.prisma.task.findUniqueOrThrow({ where: { id } });
    expect(row.costUsd?.toString()).toBe('0.012346');
  });

  it('keeps the recommendations in the order the agent reported them', async () => {
    const { member, agent } = await tenant();
    const id = await queueTask(t, member, 'cfo');
    await claim(agent, 'cfo');
    const summaries = Array.from({ length: 12 }, (_, index) => `Recommendation ${index + 1}`);

    const result = await t.graphql(
      CompleteTask,
      {
        id,
        input: { tokensUsed: 1, costUsd: 0, recommendations: summaries.map((summary) => ({ summary })) },
      },
      agent,
    );

    expect(result.data?.completeTask.recommendations.map((recommendation) => recommendation.summary)).toEqual(
      summaries,
    );
  });

  it('answers FORBIDDEN to an agent that did not claim the task', async () => {
    const { member, agent } = await tenant();
    const id = await queueTask(t, member, 'cfo');
    await claim(agent, 'cfo');
    const other = await t.caller(['agent'], { tenantId: member.tenantId });

    const result = await t.graphql(CompleteTask, { id, input: { tokensUsed: 1, costUsd: 0 } }, other);

    expect(result.errors?.[0]?.extensions?.code).toBe('FORBIDDEN');
    expect((await t.graphql(TaskQuery, { id }, member)).data?.task?.status).toBe('running');
  });

  it('writes no recommendation, no event and no budget change for a task it refuses to complete', async () => {
    const { member, agent } = await tenant();
    const running = await queueTask(t, member, 'cfo');
    await claim(agent, 'cfo');
    const pending = await queueTask(t, member, 'cfo');
    const other = await t.caller(['agent'], { tenantId: member.tenantId });
    const stranger = await t.caller(['agent'], { sub: agent.sub });
    const input = { tokensUsed: 5, costUsd: 0.25, recommendations: [{ summary: 'Should not be kept' }] };
    const before = await t.db.prisma.outboxEvent.count({ where: { tenantId: member.tenantId } });

    const refusals = [
      await t.graphql(CompleteTask, { id: running, input }, other),
      await t.graphql(CompleteTask, { id: pending, input }, agent),
      await t.graphql(CompleteTask, { id: running, input }, stranger),
    ];

    expect(refusals.map((result) => result.errors?.[0]?.extensions?.code)).toEqual([
      'FORBIDDEN',
      'CONFLICT',
      'NOT_FOUND',
    ]);
    expect(await t.db.prisma.recommendation.count({ where: { taskId: { in: [running, pending] } } })).toBe(0);
    expect(await t.db.prisma.outboxEvent.count({ where: { tenantId: member.tenantId } })).toBe(before);
    const task = await t.db.prisma.task.findUniqueOrThrow({ where: { id: running } });
    expect(task).toMatchObject({ status: 'running', costUsd: null, tokensUsed: null, finishedAt: null });
  });

  it('answers FORBIDDEN to a caller without the agent role', async () => {
    const { member } = await tenant();
    const id = await queueTask(t, member, 'cfo');

    const result = await t.graphql(CompleteTask, { id, input: { tokensUsed: 1, costUsd: 0 } }, member);

    expect(result.errors?.[0]?.extensions?.code).toBe('FORBIDDEN');
  });

  it('answers CONFLICT for a task that is not running', async () => {
    const { member, agent } = await tenant();
    const id = await queueTask(t, member, 'cfo');

    const result = await t.graphql(CompleteTask, { id, input: { tokensUsed: 1, costUsd: 0 } }, agent);

    expect(result.errors?.[0]?.message).toBe(`Task ${id} is pending, not running`);
    expect(result.errors?.[0]?.extensions?.code).toBe('CONFLICT');
  });

  it('answers NOT_FOUND for a task of another tenant', async () => {
    const { member, agent } = await tenant();
    const id = await queueTask(t, member, 'cfo');
    await claim(agent, 'cfo');
    const stranger = await t.caller(['agent'], { sub: agent.sub });

    const result = await t.graphql(CompleteTask, { id, input: { tokensUsed: 1, costUsd: 0 } }, stranger);

    expect(result.errors?.[0]?.extensions?.code).toBe('NOT_FOUND');
  });

  it('answers BAD_USER_INPUT with the location of each invalid value', async () => {
    const { agent } = await tenant();

    const result = await t.graphql(
      CompleteTask,
      { id: 'not-a-uuid', input: { tokensUsed: -1, costUsd: -0.5, recommendations: [{ summary: ' ' }] } },
      agent,
    );

    expect(result.errors?.[0]?.extensions?.code).toBe('BAD_USER_INPUT');
    expect(
      ((result.errors?.[0]?.extensions?.detail ?? []) as { loc: unknown[]; type: string }[]).map(
        ({ loc, type }) => ({
          loc,
          type,
        }),
      ),
    ).toMatchInlineSnapshot(`
        [
          {
            "loc": [
              "id",
            ],
            "type": "uuid_parsing",
          },
          {
            "loc": [
              "input",
              "tokensUsed",
            ],
            "type": "greater_than_equal",
          },
          {
            "loc": [
              "input",
              "costUsd",
            ],
            "type": "greater_than_equal",
          },
          {
            "loc": [
              "input",
              "recommendations",
              0,
              "summary",
            ],
            "type": "string_too_short",
          },
        ]
      `);
  });
});

describe('failTask', () => {
  it('ends the task as failed at once, whatever attempts remain', async () => {
    const { member, agent } = await tenant();
    const id = await queueTask(t, member, 'cmo');
    await claim(agent, 'cmo');

    const result = await t.graphql(FailTask, { id, error: 'Upstream API refused the request' }, agent);

    expect(result.data?.failTask).toMatchObject({
      id,
      status: 'failed',
      error: 'Upstream API refused the request',
    });
    expect(await claim(agent, 'cmo')).toBeNull();
  });

  it('answers FORBIDDEN to an agent that did not claim the task', async () => {
    const { member, agent } = await tenant();
    const id = await queueTask(t, member, 'cmo');
    await claim(agent, 'cmo');
    const other = await t.caller(['agent'], { tenantId: member.tenantId });

    const result = await t.graphql(FailTask, { id, error: 'not mine' }, other);

    expect(result.errors?.[0]?.extensions?.code).toBe('FORBIDDEN');
  });

  it('answers CONFLICT for a task that already finished', async () => {
    const { member, agent } = await tenant();
    const id = await queueTask(t, member, 'cmo');
    await claim(agent, 'cmo');
    await t.graphql(CompleteTask, { id, input: { tokensUsed: 1, costUsd: 0 } }, agent);

    const result = await t.graphql(FailTask, { id, error: 'too late' }, agent);

    expect(result.errors?.[0]?.extensions?.code).toBe('CONFLICT');
  });

  it('answers BAD_USER_INPUT for a blank error', async () => {
    const { member, agent } = await tenant();
    const id = await queueTask(t, member, 'cmo');

    const result = await t.graphql(FailTask, { id, error: '   ' }, agent);

    expect(result.errors?.[0]?.extensions?.code).toBe('BAD_USER_INPUT');
  });
});
