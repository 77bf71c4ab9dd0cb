import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { graphql } from '../../src/generated/graphql/index.js';
import { createTestApp, type TestApp } from '../support/app.js';
import { ClaimTask, CompleteTask, FailTask, queueTask } from './agents-support.js';
import { Promote, Register } from './finetuning-support.js';

const TaskCounts = graphql(`
  query DashboardTaskCounts($role: String) {
    taskCounts(role: $role) {
      pending
      running
      completed
      failed
      cancelled
    }
  }
`);

const ProductionModels = graphql(`
  query DashboardProductionModels {
    productionModels {
      baseModel
      versionNumber
      deploymentStatus
    }
  }
`);

const Agents = graphql(`
  query DashboardAgents {
    agents {
      role
      paused
      pausedBy
    }
  }
`);

const SetLiveMode = graphql(`
  mutation DashboardQueriesLiveMode($enabled: Boolean!) {
    setDogfoodLiveMode(enabled: $enabled) {
      dogfoodLiveMode
    }
  }
`);

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(() => t.close());

const register = (caller: Parameters<TestApp['graphql']>[2], baseModel: string) =>
  t.graphql(
    Register,
    {
      input: {
        baseModel,
        provider: 'openai',
        trainingDataHash: `sha256:${baseModel}`,
        hyperparameters: {},
        evaluationMetrics: {},
      },
    },
    caller,
  );

describe('taskCounts', () => {
  it('counts the tenant’s tasks by state, optionally of one role, and nothing of another tenant', async () => {
    const member = await t.caller(['member']);
    const agent = await t.caller(['agent'], { tenantId: member.tenantId });
    const outsider = await t.caller(['member']);
    await queueTask(t, outsider, 'cfo');
    const done = await queueTask(t, member, 'cfo');
    await t.graphql(ClaimTask, { role: 'cfo' }, agent);
    await t.graphql(CompleteTask, { id: done, input: { tokensUsed: 1, costUsd: 0 } }, agent);
    const failed = await queueTask(t, member, 'cto');
    await t.graphql(ClaimTask, { role: 'cto' }, agent);
    await t.graphql(FailTask, { id: failed, error: 'no' }, agent);
    await queueTask(t, member, 'cto');
    await queueTask(t, member, 'ceo');
    await t.graphql(ClaimTask, { role: 'ceo' }, agent);

    expect((await t.graphql(TaskCounts, {}, member)).data?.taskCounts).toEqual({
      pending: 1,
      running: 1,
      completed: 1,
      failed: 1,
      cancelled: 0,
    });
    expect((await t.graphql(TaskCounts, { role: 'CTO' }, member)).data?.taskCounts).toEqual({
      pending: 1,
      running: 0,
      completed: 0,
      failed: 1,
      cancelled: 0,
    });
  });

  it('refuses a malformed role with BAD_USER_INPUT', async () => {
    const member = await t.caller(['member']);
    const result = await t.graphql(TaskCounts, { role: '../ceo' }, member);
    expect(result.errors?.[0]?.extensions).toMatchObject({ code: 'BAD_USER_INPUT' });
  });
});

describe('productionModels', () => {
  it('lists the production version of each base model of the tenant, by name', async () => {
    const operator = await t.caller(['operator']);
    const outsider = await t.caller(['operator']);
    for (const baseModel of ['zeta-model', 'alpha-model']) {
      const first = await register(operator, baseModel);
      await t.graphql(Promote, { id: first.data?.registerModelVersion.id as string }, operator);
    }
    const second = await register(operator, 'alpha-model');
    await t.graphql(Promote, { id: second.data?.registerModelVersion.id as string }, operator);
    await register(operator, 'never-promoted');
    const foreign = await register(outsider, 'foreign-model');
    await t.graphql(Promote, { id: foreign.data?.registerModelVersion.id as string }, outsider);

    expect((await t.graphql(ProductionModels, {}, operator)).data?.productionModels).toEqual([
      { baseModel: 'alpha-model', versionNumber: 2, deploymentStatus: 'production' },
      { baseModel: 'zeta-model', versionNumber: 1, deploymentStatus: 'production' },
    ]);
  });
});

describe('AgentRole.pausedBy', () => {
  it('names the actor of the pause in force, and is null once resumed', async () => {
    const chairman = await t.caller(['chairman']);
    await t.graphql(SetLiveMode, { enabled: true }, chairman);
    await t.rest('POST', '/api/v1/dogfood/agents/cmo/pause', {
      caller: chairman,
      body: { actor_user_id: 'chair-7', reason: 'private' },
    });
    const paused = (await t.graphql(Agents, {}, chairman)).data?.agents.find((agent) => agent.role === 'cmo');
    expect(paused).toEqual({ role: 'cmo', paused: true, pausedBy: 'chair-7' });

    await t.rest('POST', '/api/v1/dogfood/agents/cmo/resume', {
      caller: chairman,
      body: { actor_user_id: 'chair-7' },
    });
    const resumed = (await t.graphql(Agents, {}, chairman)).data?.agents.find(
      (agent) => agent.role === 'cmo',
    );
    expect(resumed).toEqual({ role: 'cmo', paused: false, pausedBy: null });
  });
});
