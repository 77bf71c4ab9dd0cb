import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { MAX_DELIVERABLE_TEXT } from '../../src/domain/agents/completion-rules.js';
import { graphql } from '../../src/generated/graphql/index.js';
import { PDF, PNG } from '../domain/agents/attachment-samples.js';
import type { Caller, TestApp } from '../support/app.js';
import { withTestApp } from '../support/fixtures.js';
import { ClaimTask, memberAndAgent, queueTask } from './agents-support.js';

let t: TestApp;

withTestApp((app) => (t = app));

const SetCompletionPolicy = graphql(`
  mutation DeliverablesSetPolicy($role: String!, $input: CompletionPolicyInput!) {
    setCompletionPolicy(role: $role, input: $input) {
      role
      requireDeliverable
    }
  }
`);

const CompleteWithDeliverables = graphql(`
  mutation DeliverablesComplete($id: ID!, $input: CompleteTaskInput!) {
    completeTask(id: $id, input: $input) {
      id
      status
      costUsd
      deliverables {
        position
        kind
        title
        text
        url
        sha256
        mimeType
        filename
        size
        data
      }
    }
  }
`);

const TaskDeliverables = graphql(`
  query DeliverablesTask($id: ID!) {
    task(id: $id) {
      id
      status
      deliverables {
        kind
        sha256
      }
    }
  }
`);

const sha256 = (bytes: Buffer | string) => createHash('sha256').update(bytes).digest('hex');

/** A tenant with a chairman, and a running cfo task its agent holds. */
async function runningTask(requireDeliverable: boolean) {
  const { member, agent } = await memberAndAgent(t);
  const chairman = await t.caller(['chairman'], { tenantId: member.tenantId });
  if (requireDeliverable) {
    const set = await t.graphql(
      SetCompletionPolicy,
      { role: 'CFO', input: { requireDeliverable: true } },
      chairman,
    );
    expect(set.errors).toBeUndefined();
  }
  const id = await queueTask(t, member, 'cfo');
  const claimed = await t.graphql(ClaimTask, { role: 'cfo' }, agent);
  expect(claimed.data?.claimTask?.id).toBe(id);
  return { member, agent, chairman, id };
}

/** What a refused completion must leave as it was. */
async function rowsOf(tenantId: string, id: string) {
  const prisma = t.db.prisma;
  return {
    task: await prisma.task.findUniqueOrThrow({ where: { id } }),
    deliverables: await prisma.taskDeliverable.count({ where: { tenantId } }),
    outbox: await prisma.outboxEvent.count({ where: { tenantId } }),
    budgets: await prisma.budget.findMany({ where: { tenantId }, orderBy: { id: 'asc' } }),
  };
}

const complete = (agent: Caller, id: string, deliverables?: unknown[]) =>
  t.graphql(
    CompleteWithDeliverables,
    // Bad input is the point of some cases: the deliverables are sent as given.
    { id, input: { tokensUsed: 10, costUsd: 0.25, deliverables: deliverables as never } },
    agent,
  );

describe('completeTask with deliverables', () => {
  it('refuses a completion without a deliverable when the role requires one, and changes nothing', async () => {
    const { agent, id } = await runningTask(true);
    const before = await rowsOf(agent.tenantId, id);

    const result = await complete(agent, id);

    expect(result.errors?.[0]?.message).toBe(
      "The role 'cfo' requires at least one deliverable to complete a task",
    );
    expect(result.errors?.[0]?.extensions).toMatchObject({
      code: 'BAD_USER_INPUT',
      reason: 'deliverable_required',
      role: 'cfo',
    });
    expect(await rowsOf(agent.tenantId, id)).toEqual(before);
    expect(before.task.status).toBe('running');
  });

  it('completes a task of a role that requires evidence once a deliverable is given', async () => {
    const { agent, id } = await runningTask(true);

    const result = await complete(agent, id, [{ kind: 'TEXT', title: 'Memo', text: 'The memo.' }]);

    expect(result.errors).toBeUndefined();
    expect(result.data?.completeTask).toMatchObject({
      status: 'completed',
      deliverables: [
        {
          position: 0,
          kind: 'TEXT',
          title: 'Memo',
          text: 'The memo.',
          url: null,
          sha256: sha256('The memo.'),
          size: 9,
          data: null,
        },
      ],
    });
  });

  it('keeps texts, links and files in the order reported, each with its digest, files in the blob store', async () => {
    const { agent, id } = await runningTask(false);

    const result = await complete(agent, id, [
      { kind: 'LINK', url: 'https://example.com/report' },
      { kind: 'FILE', data: PDF.toString('base64'), mimeType: 'application/pdf', filename: 'report.pdf' },
      { kind: 'TEXT', text: 'Summary' },
    ]);

    expect(result.errors).toBeUndefined();
    const deliverables = result.data?.completeTask.deliverables ?? [];
    expect(deliverables.map((deliverable) => [deliverable.kind, deliverable.sha256])).toEqual([
      ['LINK', sha256('https://example.com/report')],
      ['FILE', sha256(PDF)],
      ['TEXT', sha256('Summary')],
    ]);
    expect(deliverables[1]).toMatchObject({
      mimeType: 'application/pdf',
      filename: 'report.pdf',
      size: PDF.byteLength,
      data: PDF.toString('base64'),
    });
    expect((await t.app.services.blobs.get(sha256(PDF)))?.equals(PDF)).toBe(true);
  });

  it('completes without deliverables when the role does not require them, as before', async () => {
    const { agent, id } = await runningTask(false);

    const result = await complete(agent, id);

    expect(result.errors).toBeUndefined();
    expect(result.data?.completeTask).toMatchObject({ status: 'completed', deliverables: [] });
  });
});

describe('completeTask with bad deliverables', () => {
  it('refuses a text over the size limit with its location, and changes nothing', async () => {
    const { agent, id } = await runningTask(true);
    const before = await rowsOf(agent.tenantId, id);

    const result = await complete(agent, id, [
      { kind: 'TEXT', text: 'ok' },
      { kind: 'TEXT', text: 'x'.repeat(MAX_DELIVERABLE_TEXT + 1) },
    ]);

    expect(result.errors?.[0]?.extensions?.code).toBe('BAD_USER_INPUT');
    expect(
      ((result.errors?.[0]?.extensions?.detail ?? []) as { loc: unknown[]; msg: string }[]).map(
        ({ loc, msg }) => ({
          loc,
          msg,
        }),
      ),
    ).toMatchInlineSnapshot(`
      [
        {
          "loc": [
            "input",
            "deliverables",
            1,
            "text",
          ],
          "msg": "String should have at most 65536 characters",
        },
      ]
    `);
    expect(await rowsOf(agent.tenantId, id)).toEqual(before);
  });

  it('refuses a file whose bytes are not of its type, and stores no bytes', async () => {
    const { agent, id } = await runningTask(false);
    const before = await rowsOf(agent.tenantId, id);

    const result = await complete(agent, id, [
      { kind: 'FILE', data: PNG.toString('base64'), mimeType: 'application/pdf' },
    ]);

    expect(result.errors?.[0]?.extensions?.code).toBe('BAD_USER_INPUT');
    const detail = (result.errors?.[0]?.extensions?.detail ?? []) as { loc: unknown[] }[];
    expect(detail[0]?.loc).toEqual(['input', 'deliverables', 0, 'data']);
    expect(await rowsOf(agent.tenantId, id)).toEqual(before);
    expect(await t.app.services.blobs.has(sha256(PNG))).toBe(false);
  });

  it('refuses fields of another kind and a link that is not http(s)', async () => {
    const { agent, id } = await runningTask(false);

    const result = await complete(agent, id, [
      { kind: 'TEXT', text: 'a', url: 'https://example.com' },
      { kind: 'LINK', url: 'javascript:alert(1)' },
      { kind: 'FILE', mimeType: 'application/pdf' },
    ]);

    const detail = (result.errors?.[0]?.extensions?.detail ?? []) as { loc: unknown[] }[];
    expect(detail.map((item) => item.loc)).toEqual([
      ['input', 'deliverables', 0, 'url'],
      ['input', 'deliverables', 1, 'url'],
      ['input', 'deliverables', 2, 'data'],
    ]);
    expect((await t.db.prisma.task.findUniqueOrThrow({ where: { id } })).status).toBe('running');
  });

  it('refuses more than ten deliverables', async () => {
    const { agent, id } = await runningTask(false);

    const result = await complete(
      agent,
      id,
      Array.from({ length: 11 }, (_, index) => ({ kind: 'TEXT', text: `${index}` })),
    );

    expect(result.errors?.[0]?.extensions?.code).toBe('BAD_USER_INPUT');
    expect((await t.db.prisma.task.findUniqueOrThrow({ where: { id } })).status).toBe('running');
  });
});

describe('setCompletionPolicy', () => {
  it('is the chairman’s, and audited', async () => {
    const { member, agent } = await memberAndAgent(t);
    const chairman = await t.caller(['chairman'], { tenantId: member.tenantId });
    const operator = await t.caller(['operator'], { tenantId: member.tenantId });

    for (const caller of [member, agent, operator]) {
      const refused = await t.graphql(
        SetCompletionPolicy,
        { role: 'cfo', input: { requireDeliverable: true } },
        caller,
      );
      expect(refused.errors?.[0]?.extensions?.code).toBe('FORBIDDEN');
    }
    const set = await t.graphql(
      SetCompletionPolicy,
      { role: 'cfo', input: { requireDeliverable: true } },
      chairman,
    );

    expect(set.data?.setCompletionPolicy).toEqual({ role: 'cfo', requireDeliverable: true });
    const audit = await t.db.prisma.auditEntry.findMany({
      where: { tenantId: member.tenantId, action: 'agent_role.completion_policy' },
    });
    expect(audit).toHaveLength(1);
  });

  it('answers NOT_FOUND for a role the tenant does not have, writing nothing', async () => {
    const chairman = await t.caller(['chairman']);
    await t.app.services.tenants.ensure(chairman.tenantId);

    const result = await t.graphql(
      SetCompletionPolicy,
      { role: 'nobody', input: { requireDeliverable: true } },
      chairman,
    );

    expect(result.errors?.[0]?.extensions).toMatchObject({ code: 'NOT_FOUND' });
    expect(await t.db.prisma.auditEntry.count({ where: { tenantId: chairman.tenantId } })).toBe(0);
  });
});

describe('deliverables across tenants', () => {
  it('another tenant sees none of them, cannot complete the task, and its policy applies only to itself', async () => {
    const { agent, id } = await runningTask(false);
    const done = await complete(agent, id, [{ kind: 'TEXT', text: 'Ours' }]);
    expect(done.errors).toBeUndefined();
    const other = await runningTask(true);

    const read = await t.graphql(TaskDeliverables, { id }, other.chairman);
    const foreign = await complete(other.agent, id, [{ kind: 'TEXT', text: 'Theirs' }]);
    const ownRead = await t.graphql(
      TaskDeliverables,
      { id },
      await t.caller(['member'], { tenantId: agent.tenantId }),
    );

    expect(read.data?.task).toBeNull();
    expect(foreign.errors?.[0]?.extensions?.code).toBe('NOT_FOUND');
    expect(ownRead.data?.task?.deliverables).toEqual([{ kind: 'TEXT', sha256: sha256('Ours') }]);
    expect(await t.db.prisma.taskDeliverable.count({ where: { tenantId: other.agent.tenantId } })).toBe(0);
  });
});
