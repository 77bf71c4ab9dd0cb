import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { graphql } from '../../src/generated/graphql/index.js';
import { createTestApp, type TestApp } from '../support/app.js';
import { ClaimTask, chat, queueTask, TaskQuery, TasksQuery, ThreadQuery } from './agents-support.js';

const AgentsQuery = graphql(`
  query AgentsList {
    agents {
      role
      builtIn
      paused
      displayName
    }
  }
`);

const TaskCountQuery = graphql(`
  query AgentsTaskCount($role: String, $status: TaskStatus, $first: Int, $after: String) {
    tasks(role: $role, status: $status, first: $first, after: $after) {
      nodes {
        id
      }
      nextCursor
      totalCount
    }
  }
`);

const AgentQuery = graphql(`
  query AgentsOne($role: String!) {
    agent(role: $role) {
      role
      builtIn
    }
  }
`);

const RegisterRole = graphql(`
  mutation AgentsRegister($input: RegisterAgentRoleInput!) {
    registerAgentRole(input: $input) {
      role
      displayName
      builtIn
      paused
    }
  }
`);

let t: TestApp;

beforeAll(async () => {
  t = await createTestApp();
});
afterAll(() => t.close());

describe('agents and agent(role)', () => {
  it('lists the 8 built-in C-suite roles of a new tenant', async () => {
    const { data } = await t.graphql(AgentsQuery, undefined, await t.caller(['member']));

    expect(data?.agents.map((agent) => agent.role)).toEqual([
      'ceo',
      'cfo',
      'chro',
      'clo',
      'cmo',
      'coo',
      'cpo',
      'cto',
    ]);
    expect(data?.agents.every((agent) => agent.builtIn && !agent.paused)).toBe(true);
  });

  it('finds a role case-insensitively', async () => {
    const { data } = await t.graphql(AgentQuery, { role: 'CHRO' }, await t.caller(['member']));

    expect(data?.agent).toEqual({ role: 'chro', builtIn: true });
  });

  it('answers null for a role the tenant does not have', async () => {
    const { data } = await t.graphql(AgentQuery, { role: 'cso' }, await t.caller(['member']));

    expect(data?.agent).toBeNull();
  });
});

describe('registerAgentRole', () => {
  it('adds a role an operator names, which then takes chat messages', async () => {
    const operator = await t.caller(['operator']);

    const result = await t.graphql(
      RegisterRole,
      { input: { role: 'sales-ops', displayName: 'Sales operations' } },
      operator,
    );

    expect(result.data?.registerAgentRole).toEqual({
      role: 'sales-ops',
      displayName: 'Sales operations',
      builtIn: false,
      paused: false,
    });
    expect((await chat(t, operator, 'Sales-Ops', { message: 'Forecast pipeline' })).status).toBe(202);
  });

  it('answers CONFLICT for a role the tenant has', async () => {
    const chairman = await t.caller(['chairman']);
    await t.graphql(RegisterRole, { input: { role: 'legal_ops' } }, chairman);

    for (const role of ['legal_ops', 'ceo']) {
      const result = await t.graphql(RegisterRole, { input: { role } }, chairman);
      expect(result.errors?.[0]).toMatchObject({
        message: `Agent role '${role}' already exists`,
        extensions: { code: 'CONFLICT' },
      });
    }
  });

  it('answers FORBIDDEN to a member', async () => {
    const result = await t.graphql(RegisterRole, { input: { role: 'growth' } }, await t.caller(['member']));

    expect(result.errors?.[0]?.extensions?.code).toBe('FORBIDDEN');
  });

  it.each(['Growth', 'g', '1growth', 'growth team', 'g'.repeat(65)])(
    'answers BAD_USER_INPUT for the slug %j',
    async (role) => {
      const result = await t.graphql(RegisterRole, { input: { role } }, await t.caller(['operator']));

      expect(result.errors?.[0]?.extensions).toMatchObject({
        code: 'BAD_USER_INPUT',
        detail: [{ loc: ['input', 'role'], type: 'string_pattern_mismatch' }],
      });
    },
  );

  it('keeps a registered role to its tenant', async () => {
    await t.graphql(RegisterRole, { input: { role: 'research' } }, await t.caller(['operator']));

    const { data } = await t.graphql(AgentQuery, { role: 'research' }, await t.caller(['member']));

    expect(data?.agent).toBeNull();
  });
});

describe('task(id), tasks and thread(id)', () => {
  it('lists the tenant’s tasks newest first, a page at a time', async () => {
    const member = await t.caller(['member']);
    const ids = [];
    for (const message of ['one', 'two', 'three']) ids.push(await queueTask(t, member, 'ceo', message));

    const first = await t.graphql(TasksQuery, { first: 2 }, member);
    const second = await t.graphql(TasksQuery, { first: 2, after: first.data?.tasks.nextCursor }, member);

    expect(first.data?.tasks.nodes.map((task) => task.id)).toEqual([ids[2], ids[1]]);
    expect(second.data?.tasks).toEqual({
      nodes: [{ id: ids[0], role: 'ceo', status: 'pending' }],
      nextCursor: null,
    });
  });

  it('filters tasks by role and status', async () => {
    const member = await t.caller(['member']);
    const agent = await t.caller(['agent'], { tenantId: member.tenantId });
    const claimed = await queueTask(t, member, 'cfo');
    const waiting = await queueTask(t, member, 'cfo');
    await queueTask(t, member, 'cto');
    await t.graphql(ClaimTask, { role: 'cfo' }, agent);

    const running = await t.graphql(TasksQuery, { role: 'CFO', status: 'running' }, member);
    const pending = await t.graphql(TasksQuery, { role: 'cfo', status: 'pending' }, member);

    expect(running.data?.tasks.nodes.map((task) => task.id)).toEqual([claimed]);
    expect(pending.data?.tasks.nodes.map((task) => task.id)).toEqual([waiting]);
  });

  it('counts what the filter matches on every page, of the caller’s tenant and roles only', async () => {
    const member = await t.caller(['member']);
    for (let index = 0; index < 3; index += 1) await queueTask(t, member, 'cfo');
    await queueTask(t, member, 'cto');
    // Another tenant's tasks never count.
    await queueTask(t, await t.caller(['member']), 'cfo');

    const first = await t.graphql(TaskCountQuery, { role: 'cfo', first: 2 }, member);
    const second = await t.graphql(
      TaskCountQuery,
      { role: 'cfo', first: 2, after: first.data?.tasks.nextCursor },
      member,
    );
    const all = await t.graphql(TaskCountQuery, {}, member);
    const running = await t.graphql(TaskCountQuery, { status: 'running' }, member);
    const cfoAgent = await t.caller(['agent'], { tenantId: member.tenantId, agentRoles: ['cfo'] });
    const bound = await t.graphql(TaskCountQuery, {}, cfoAgent);

    expect(first.data?.tasks.nodes).toHaveLength(2);
    expect(first.data?.tasks.totalCount).toBe(3);
    expect(second.data?.tasks.nodes).toHaveLength(1);
    expect(second.data?.tasks.totalCount).toBe(3);
    expect(all.data?.tasks.totalCount).toBe(4);
    expect(running.data?.tasks).toEqual({ nodes: [], nextCursor: null, totalCount: 0 });
    expect(bound.data?.tasks.totalCount).toBe(3);
  });

  it('shows no task of another tenant', async () => {
    const owner = await t.caller(['member']);
    const id = await queueTask(t, owner, 'ceo');
    const stranger = await t.caller(['chairman']);

    expect((await t.graphql(TaskQuery, { id }, stranger)).data?.task).toBeNull();
    expect((await t.graphql(TasksQuery, {}, stranger)).data?.tasks.nodes).toEqual([]);
  });

  it('shows no thread of another tenant', async () => {
    const owner = await t.caller(['member']);
    const sent = await chat(t, owner, 'ceo', { message: 'private' });
    const threadId = (await t.graphql(TaskQuery, { id: sent.body.data.task_id }, owner)).data?.task
      ?.threadId as string;

    const { data } = await t.graphql(ThreadQuery, { id: threadId }, await t.caller(['chairman']));

    expect(data?.thread).toBeNull();
  });

  it('answers BAD_USER_INPUT for a task id that is not a uuid', async () => {
    const result = await t.graphql(TaskQuery, { id: 'task-1' }, await t.caller(['member']));

    expect(result.errors?.[0]?.extensions).toMatchObject({
      code: 'BAD_USER_INPUT',
      detail: [{ loc: ['id'], type: 'uuid_parsing' }],
    });
  });
});
