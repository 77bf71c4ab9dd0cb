import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { CLAIM, company, ok } from '../schema/agents-delegation-support.js';
import { queueTask } from '../schema/agents-support.js';
import type { TestApp } from '../support/app.js';
import { withTestApp } from '../support/fixtures.js';

let t: TestApp;
withTestApp((app) => {
  t = app;
});

const REPORT = `mutation Report($taskId: ID!, $steps: [ModelStepInput!]!) {
  reportTaskSteps(taskId: $taskId, steps: $steps) { lastSeq }
}`;
const COMPLETE = `mutation Complete($id: ID!, $input: CompleteTaskInput!) { completeTask(id: $id, input: $input) { status } }`;

const modelStep = (costUsd: number) => ({
  model: 'gpt-test',
  durationMs: 250,
  inputTokens: 20,
  outputTokens: 10,
  costUsd,
  finishReason: 'stop',
});

/** A tenant whose CFO task ran: claimed, three model calls, completed (5 steps). */
async function ranTask() {
  const people = await company(t);
  const taskId = await queueTask(t, people.chairman, 'cfo', 'Close the books.');
  await ok(t, CLAIM, { role: 'cfo' }, people.agent);
  await ok(
    t,
    REPORT,
    { taskId, steps: [modelStep(0.001), modelStep(0.002), modelStep(0.0005)] },
    people.agent,
  );
  await ok(
    t,
    COMPLETE,
    { id: taskId, input: { output: 'done', costUsd: 0.0035, tokensUsed: 90 } },
    people.agent,
  );
  return { ...people, taskId };
}

describe('GET /api/v1/tasks/{id}/steps', () => {
  it('answers the run record in order with snake-case fields, paged by limit and cursor', async () => {
    const { chairman, taskId } = await ranTask();

    const first = await t.rest('GET', `/api/v1/tasks/${taskId}/steps?limit=2`, { caller: chairman });
    expect(first.status).toBe(200);
    expect(first.body.data.map((step: any) => [step.seq, step.kind])).toEqual([
      [1, 'claimed'],
      [2, 'model_call'],
    ]);
    expect(first.body.data[1]).toMatchObject({
      attempt: 1,
      source: 'agent',
      model: 'gpt-test',
      duration_ms: 250,
      input_tokens: 20,
      output_tokens: 10,
      tokens: 30,
      cost_usd: 0.001,
      cost_usd_text: '0.001000',
      charged: true,
      finish_reason: 'stop',
      child_task_id: null,
    });
    expect(first.body.next_cursor).toEqual(expect.any(String));

    const rest = await t.rest('GET', `/api/v1/tasks/${taskId}/steps?cursor=${first.body.next_cursor}`, {
      caller: chairman,
    });
    expect(rest.status).toBe(200);
    expect(rest.body.data.map((step: any) => [step.seq, step.kind])).toEqual([
      [3, 'model_call'],
      [4, 'model_call'],
      [5, 'completed'],
    ]);
    expect(rest.body.next_cursor).toBeNull();
  });

  it('answers the same steps as the GraphQL field Task.steps', async () => {
    const { chairman, taskId } = await ranTask();
    const graphql = await ok(
      t,
      `query ($id: ID!) { task(id: $id) { steps { nodes { id seq kind costUsdText } nextCursor } } }`,
      { id: taskId },
      chairman,
    );
    const rest = await t.rest('GET', `/api/v1/tasks/${taskId}/steps`, { caller: chairman });
    expect(rest.body.data.map((step: any) => [step.id, step.seq, step.kind, step.cost_usd_text])).toEqual(
      graphql.task.steps.nodes.map((step: any) => [step.id, step.seq, step.kind, step.costUsdText]),
    );
  });

  it('answers 404 in the error shape for a task that does not exist', async () => {
    const { chairman } = await company(t);
    const id = randomUUID();
    const response = await t.rest('GET', `/api/v1/tasks/${id}/steps`, { caller: chairman });
    expect(response.status).toBe(404);
    expect(response.body).toEqual({ detail: `Task ${id} not found` });
  });

  it('answers 404 to another tenant’s chairman and agent, as for a task that does not exist', async () => {
    const { taskId } = await ranTask();
    const stranger = await company(t);
    for (const caller of [stranger.chairman, stranger.agent, stranger.member]) {
      const response = await t.rest('GET', `/api/v1/tasks/${taskId}/steps`, { caller });
      expect(response.status).toBe(404);
      expect(response.body).toEqual({ detail: `Task ${taskId} not found` });
    }
  });

  it('answers 401 without a token', async () => {
    const { taskId } = await ranTask();
    const response = await t.rest('GET', `/api/v1/tasks/${taskId}/steps`);
    expect(response.status).toBe(401);
    expect(response.body).toEqual({ detail: 'Not authenticated' });
  });

  it.each([
    ['0', 'limit'],
    ['1001', 'limit'],
    ['ten', 'limit'],
  ])('answers 422 at ["query","limit"] for limit=%s', async (limit) => {
    const { chairman, taskId } = await ranTask();
    const response = await t.rest('GET', `/api/v1/tasks/${taskId}/steps?limit=${limit}`, {
      caller: chairman,
    });
    expect(response.status).toBe(422);
    expect(response.body.detail).toEqual([expect.objectContaining({ loc: ['query', 'limit'] })]);
  });

  it.each([
    ['garbage', 'garbage'],
    ['a cursor of another shape', Buffer.from('seq:01').toString('base64url')],
  ])('answers 422 at ["query","cursor"] for %s', async (_name, cursor) => {
    const { chairman, taskId } = await ranTask();
    const response = await t.rest('GET', `/api/v1/tasks/${taskId}/steps?cursor=${cursor}`, {
      caller: chairman,
    });
    expect(response.status).toBe(422);
    expect(response.body.detail).toEqual([
      expect.objectContaining({ type: 'value_error', loc: ['query', 'cursor'] }),
    ]);
  });

  it('answers 422 at ["path","id"] for an id that is not a uuid', async () => {
    const { chairman } = await company(t);
    const response = await t.rest('GET', '/api/v1/tasks/not-a-uuid/steps', { caller: chairman });
    expect(response.status).toBe(422);
    expect(response.body.detail).toEqual([expect.objectContaining({ loc: ['path', 'id'] })]);
  });
});
