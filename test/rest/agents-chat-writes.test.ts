import { createHash, randomUUID } from 'node:crypto';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PNG } from '../domain/agents/attachment-samples.js';
import { chat, filesUnder, storedRows, TaskQuery, watchBus } from '../schema/agents-support.js';
import { type Caller, createTestApp, type TestApp } from '../support/app.js';

// A chat message is written by one statement: these tests pin what it writes when it is accepted and
// that it writes and publishes nothing when it is refused.

const nothing = { tasks: 0, threads: 0, messages: 0, attachments: 0, outbox: 0 };
/** What one accepted chat message without attachments stores. */
const oneChat = { ...nothing, tasks: 1, threads: 1, messages: 1, outbox: 1 };

let t: TestApp;

beforeAll(async () => {
  t = await createTestApp();
});
afterAll(() => t.close());

async function threadOf(caller: Caller, taskId: string): Promise<string> {
  const task = await t.graphql(TaskQuery, { id: taskId }, caller);
  return task.data?.task?.threadId as string;
}

describe('POST /api/v1/agents/{role}/chat writes', () => {
  it('publishes TASK_UPDATED with the state of the task it stored', async () => {
    const caller = await t.caller(['member']);
    await t.app.services.tenants.ensure(caller.tenantId);
    const bus = await watchBus(t, 'TASK_UPDATED', caller.tenantId);

    const response = await chat(t, caller, 'CFO', { message: 'Close the books' });

    const event = await bus.next();
    await bus.close();
    const task = await t.db.prisma.task.findUniqueOrThrow({ where: { id: response.body.data.task_id } });
    expect(event.payload).toEqual({
      task_id: task.id,
      role: 'cfo',
      status: 'pending',
      attempts: 0,
      updated_at: task.updatedAt.toISOString(),
      parent_task_id: null,
      root_task_id: task.id,
      event_id: event.eventId,
      type: 'TASK_UPDATED',
      tenant_id: caller.tenantId,
    });
    expect(task).toMatchObject({ role: 'cfo', message: 'Close the books', createdBy: caller.sub });
    expect(await storedRows(t, caller.tenantId)).toEqual(oneChat);
  });

  it('moves a named thread to the top and stores the turn in it', async () => {
    const caller = await t.caller(['member']);
    const first = await chat(t, caller, 'ceo', { message: 'first' });
    const threadId = await threadOf(caller, first.body.data.task_id);
    const before = await t.db.prisma.thread.findUniqueOrThrow({ where: { id: threadId } });

    const second = await chat(t, caller, 'ceo', { message: 'second', thread_id: threadId });

    expect(second.status).toBe(202);
    const after = await t.db.prisma.thread.findUniqueOrThrow({
      where: { id: threadId },
      include: { messages: { orderBy: { createdAt: 'asc' } } },
    });
    expect(after.updatedAt.getTime()).toBeGreaterThanOrEqual(before.updatedAt.getTime());
    expect(after.messages.map((message) => message.body)).toEqual(['first', 'second']);
    expect(await threadOf(caller, second.body.data.task_id)).toBe(threadId);
  });

  it('links the attachment rows to the task and to the stored turn, in order', async () => {
    const caller = await t.caller(['member']);
    const png = PNG.toString('base64');

    const response = await chat(t, caller, 'cmo', {
      message: 'two files',
      attachments: [
        { data: png, mime_type: 'image/png', filename: 'a.png' },
        { data: png, mime_type: 'image/png' },
      ],
    });

    expect(response.status).toBe(202);
    const rows = await t.db.prisma.attachment.findMany({
      where: { taskId: response.body.data.task_id },
      orderBy: { position: 'asc' },
      include: { message: true },
    });
    expect(rows.map((row) => [row.position, row.filename, row.message?.body])).toEqual([
      [0, 'a.png', 'two files'],
      [1, null, 'two files'],
    ]);
  });
});

describe('POST /api/v1/agents/{role}/chat refusals write and publish nothing', () => {
  it('for a role the tenant does not have: the next event is the next accepted message', async () => {
    const caller = await t.caller(['member']);
    await t.app.services.tenants.ensure(caller.tenantId);
    const bus = await watchBus(t, 'TASK_UPDATED', caller.tenantId);

    const refused = await chat(t, caller, 'cso', { message: 'hi' });
    expect(await storedRows(t, caller.tenantId)).toEqual(nothing);
    const accepted = await chat(t, caller, 'ceo', { message: 'hi', persist_thread: false });

    expect(refused.status).toBe(404);
    const event = await bus.next();
    await bus.close();
    expect(event.payload.task_id).toBe(accepted.body.data.task_id);
  });

  it('for a thread of another role', async () => {
    const caller = await t.caller(['member']);
    const first = await chat(t, caller, 'ceo', { message: 'to the CEO' });
    const threadId = await threadOf(caller, first.body.data.task_id);
    const before = await t.db.prisma.thread.findUniqueOrThrow({ where: { id: threadId } });

    const response = await chat(t, caller, 'cfo', { message: 'to the CFO', thread_id: threadId });

    expect(response.status).toBe(409);
    expect(await storedRows(t, caller.tenantId)).toEqual(oneChat);
    expect(await t.db.prisma.thread.findUniqueOrThrow({ where: { id: threadId } })).toEqual(before);
  });

  it('for a thread of another tenant, even when the turn is not to be stored', async () => {
    const other = await t.caller(['member']);
    const theirs = await chat(t, other, 'ceo', { message: 'theirs' });
    const threadId = await threadOf(other, theirs.body.data.task_id);
    const caller = await t.caller(['member']);
    await t.app.services.tenants.ensure(caller.tenantId);

    const response = await chat(t, caller, 'ceo', {
      message: 'mine',
      thread_id: threadId,
      persist_thread: false,
    });

    expect(response.status).toBe(404);
    expect(await storedRows(t, caller.tenantId)).toEqual(nothing);
    expect(await storedRows(t, other.tenantId)).toEqual(oneChat);
  });

  it('for a role the tenant does not have, with attachments: not even their bytes', async () => {
    const caller = await t.caller(['member']);
    await t.app.services.tenants.ensure(caller.tenantId);
    const bytes = Buffer.concat([PNG, Buffer.from(randomUUID())]);
    const digest = createHash('sha256').update(bytes).digest('hex');

    const response = await chat(t, caller, 'cso', {
      message: 'hi',
      attachments: [{ data: bytes.toString('base64'), mime_type: 'image/png' }],
    });

    expect(response.status).toBe(404);
    expect(await storedRows(t, caller.tenantId)).toEqual(nothing);
    expect(await filesUnder(t.dataDir)).not.toContain(
      path.join('blobs', digest.slice(0, 2), digest.slice(2, 4), digest),
    );
  });
});
