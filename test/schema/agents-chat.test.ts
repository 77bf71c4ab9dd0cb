import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PNG } from '../domain/agents/attachment-samples.js';
import { createTestApp, type TestApp } from '../support/app.js';
import { ChatMutation, storedRows } from './agents-support.js';

let t: TestApp;

beforeAll(async () => {
  t = await createTestApp();
});
afterAll(() => t.close());

describe('sendChatMessage', () => {
  it('answers the receipt with the thread the turn was stored in and the pending task', async () => {
    const member = await t.caller(['member']);

    const { data } = await t.graphql(
      ChatMutation,
      { role: 'Ceo', input: { message: 'Plan the offsite' } },
      member,
    );

    expect(data?.sendChatMessage).toEqual({
      taskId: expect.any(String),
      agentRole: 'ceo',
      status: 'pending',
      acknowledgment: 'Your message is queued for the CEO agent.',
      threadId: expect.any(String),
      createdAt: data?.sendChatMessage.task.createdAt,
      task: {
        id: data?.sendChatMessage.taskId,
        status: 'pending',
        message: 'Plan the offsite',
        createdAt: expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
      },
    });
  });

  it('answers a null thread when the turn is not stored', async () => {
    const member = await t.caller(['member']);

    const { data } = await t.graphql(
      ChatMutation,
      { role: 'ceo', input: { message: 'hi', persistThread: false } },
      member,
    );

    expect(data?.sendChatMessage.threadId).toBeNull();
  });

  it('answers BAD_USER_INPUT located in the GraphQL arguments and stores nothing', async () => {
    const member = await t.caller(['member']);

    const result = await t.graphql(
      ChatMutation,
      {
        role: 'ceo',
        input: {
          message: 'hi',
          attachments: [{ data: PNG.toString('base64'), mimeType: 'image/gif', filename: 'a.png' }],
        },
      },
      member,
    );

    expect(result.errors?.[0]?.extensions).toMatchObject({
      code: 'BAD_USER_INPUT',
      detail: [
        {
          type: 'value_error',
          loc: ['input', 'attachments', 0, 'data'],
          msg: 'Value error, data does not look like a GIF file (it looks like a PNG file)',
        },
      ],
    });
    expect(await storedRows(t, member.tenantId)).toMatchObject({ tasks: 0, threads: 0, attachments: 0 });
  });

  it('answers UNAUTHENTICATED without a token', async () => {
    const result = await t.graphql(ChatMutation, { role: 'ceo', input: { message: 'hi' } }, null);

    expect(result.errors?.[0]?.extensions?.code).toBe('UNAUTHENTICATED');
  });

  it('answers NOT_FOUND for a role the tenant does not have', async () => {
    const result = await t.graphql(
      ChatMutation,
      { role: 'cso', input: { message: 'hi' } },
      await t.caller(['member']),
    );

    expect(result.errors?.[0]).toMatchObject({
      message: "Unknown agent role 'cso'",
      extensions: { code: 'NOT_FOUND' },
    });
  });
});
