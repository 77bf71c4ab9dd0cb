import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Caller, createTestApp, type TestApp } from '../support/app.js';
import { ClaimTask, CompleteTask, queueTask } from './agents-support.js';

let t: TestApp;

beforeAll(async () => {
  t = await createTestApp();
});
afterAll(() => t.close());

async function runningTask() {
  const member = await t.caller(['member']);
  const agent = await t.caller(['agent'], { tenantId: member.tenantId, sub: `agent-${member.sub}` });
  await t.app.services.tenants.ensure(member.tenantId);
  const id = await queueTask(t, member, 'cfo');
  expect((await t.graphql(ClaimTask, { role: 'cfo' }, agent)).data?.claimTask?.id).toBe(id);
  return { member, agent, id };
}

const usageQuery =
  'query ($id: ID!) { task(id: $id) { status tokensUsed usage { inputTokens cachedInputTokens outputTokens reasoningTokens } } }';
const readTask = async (id: string, caller: Caller) =>
  ((await t.graphql(usageQuery, { id }, caller)).data as { task: Record<string, unknown> }).task;

describe('completeTask usage', () => {
  it('stores the breakdown by kind and reads it back on Task', async () => {
    const { member, agent, id } = await runningTask();
    const usage = { inputTokens: 1500, cachedInputTokens: 1000, outputTokens: 300, reasoningTokens: 100 };

    const result = await t.graphql(
      CompleteTask,
      { id, input: { tokensUsed: 1800, costUsd: 0.0044, usage } },
      agent,
    );

    expect(result.errors).toBeUndefined();
    expect(result.data?.completeTask.usage).toEqual(usage);
    expect(await readTask(id, member)).toEqual({ status: 'completed', tokensUsed: 1800, usage });
    const row = await t.db.prisma.task.findUniqueOrThrow({ where: { id } });
    expect([row.inputTokens, row.cachedInputTokens, row.outputTokens, row.reasoningTokens]).toEqual([
      1500n,
      1000n,
      300n,
      100n,
    ]);
  });

  it('counts omitted cached and reasoning tokens as 0', async () => {
    const { member, agent, id } = await runningTask();

    await t.graphql(
      CompleteTask,
      { id, input: { tokensUsed: 30, costUsd: 0, usage: { inputTokens: 20, outputTokens: 10 } } },
      agent,
    );

    expect((await readTask(id, member)).usage).toEqual({
      inputTokens: 20,
      cachedInputTokens: 0,
      outputTokens: 10,
      reasoningTokens: 0,
    });
  });

  it('reads null for a task completed without a breakdown', async () => {
    const { member, agent, id } = await runningTask();

    await t.graphql(CompleteTask, { id, input: { tokensUsed: 30, costUsd: 0 } }, agent);

    expect(await readTask(id, member)).toEqual({ status: 'completed', tokensUsed: 30, usage: null });
  });

  it('answers BAD_USER_INPUT for a breakdown that does not add up, changing nothing', async () => {
    const { member, agent, id } = await runningTask();
    const refusals = [
      { inputTokens: 20, outputTokens: 11 },
      { inputTokens: 20, cachedInputTokens: 21, outputTokens: 10 },
      { inputTokens: 20, outputTokens: 10, reasoningTokens: 11 },
      { inputTokens: -1, outputTokens: 31 },
    ];

    const details = [];
    for (const usage of refusals) {
      const result = await t.graphql(
        CompleteTask,
        { id, input: { tokensUsed: 30, costUsd: 0, usage } },
        agent,
      );
      expect(result.errors?.[0]?.extensions?.code).toBe('BAD_USER_INPUT');
      details.push(
        ((result.errors?.[0]?.extensions?.detail ?? []) as { loc: unknown[]; msg: string }[]).map(
          ({ loc, msg }) => `${loc.join('.')}: ${msg}`,
        ),
      );
    }

    expect(details).toMatchInlineSnapshot(`
      [
        [
          "input.usage.inputTokens: Value error, inputTokens + outputTokens must equal tokensUsed",
        ],
        [
          "input.usage.cachedInputTokens: Value error, cachedInputTokens must not exceed inputTokens",
        ],
        [
          "input.usage.reasoningTokens: Value error, reasoningTokens must not exceed outputTokens",
        ],
        [
          "input.usage.inputTokens: Input should be greater than or equal to 0",
        ],
      ]
    `);
    expect(await readTask(id, member)).toEqual({ status: 'running', tokensUsed: null, usage: null });
  });

  it('answers NOT_FOUND for another tenant’s task, changing nothing', async () => {
    const { member, agent, id } = await runningTask();
    const stranger = await t.caller(['agent'], { sub: agent.sub });

    const result = await t.graphql(
      CompleteTask,
      { id, input: { tokensUsed: 30, costUsd: 0, usage: { inputTokens: 20, outputTokens: 10 } } },
      stranger,
    );

    expect(result.errors?.[0]?.extensions?.code).toBe('NOT_FOUND');
    expect(await readTask(id, member)).toEqual({ status: 'running', tokensUsed: null, usage: null });
  });
});
