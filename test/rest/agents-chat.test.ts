import { createHash, randomUUID } from 'node:crypto';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { MAX_ATTACHMENT_BYTES } from '../../src/domain/agents/attachments.js';
import { GIF89A, PDF, PNG, SAMPLES } from '../domain/agents/attachment-samples.js';
import { chat, filesUnder, storedRows, TaskQuery, ThreadQuery } from '../schema/agents-support.js';
import type { Caller, TestApp } from '../support/app.js';
import { withTestAppAndCaller } from '../support/fixtures.js';

const b64 = (bytes: Buffer) => bytes.toString('base64');
const sha256 = (bytes: Buffer) => createHash('sha256').update(bytes).digest('hex');
const blobPath = (digest: string) => path.join('blobs', digest.slice(0, 2), digest.slice(2, 4), digest);
const png = (extra: Record<string, unknown> = {}) => ({ data: b64(PNG), mime_type: 'image/png', ...extra });

let t: TestApp;
let chairman: Caller;

withTestAppAndCaller(['chairman'], (made) => ({ t, caller: chairman } = made));

describe('POST /api/v1/agents/{role}/chat', () => {
  it('answers 202 with the ChatResponse of a pending task', async () => {
    const response = await chat(t, chairman, 'cfo', { message: 'Forecast Q3 cash flow' });

    expect(response.status).toBe(202);
    expect(response.body).toEqual({
      data: {
        task_id: expect.stringMatching(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/),
        agent_role: 'cfo',
        status: 'pending',
        acknowledgment: 'Your message is queued for the CFO agent.',
      },
    });
  });

  it('queues the message as a pending task of the role', async () => {
    const response = await chat(t, chairman, 'cto', { message: 'Review the architecture' });

    const { data } = await t.graphql(TaskQuery, { id: response.body.data.task_id }, chairman);
    expect(data?.task).toMatchObject({
      role: 'cto',
      status: 'pending',
      attempts: 0,
      claimedBy: null,
      message: 'Review the architecture',
      createdBy: chairman.sub,
    });
  });

  it('matches the path role case-insensitively and answers it in lower case', async () => {
    const response = await chat(t, chairman, 'CMO', { message: 'Plan the launch' });

    expect(response.status).toBe(202);
    expect(response.body.data.agent_role).toBe('cmo');
  });

  it('accepts a message from every authenticated role', async () => {
    for (const role of ['member', 'operator', 'agent'] as const) {
      const caller = await t.caller([role], { tenantId: chairman.tenantId });
      expect((await chat(t, caller, 'ceo', { message: `from ${role}` })).status).toBe(202);
    }
  });

  it('accepts 4096 characters counted as code points, not UTF-16 units', async () => {
    const response = await chat(t, chairman, 'ceo', { message: '😀'.repeat(4096) });

    expect(response.status).toBe(202);
  });

  it('creates a thread holding the turn when persist_thread is left out', async () => {
    const caller = await t.caller(['member']);
    const response = await chat(t, caller, 'coo', { message: 'First turn' });

    const { data } = await t.graphql(TaskQuery, { id: response.body.data.task_id }, caller);
    const thread = await t.graphql(ThreadQuery, { id: data?.task?.threadId as string }, caller);
    expect(thread.data?.thread).toEqual({
      id: data?.task?.threadId,
      role: 'coo',
      createdBy: caller.sub,
      messages: [{ author: caller.sub, body: 'First turn', attachments: [] }],
      tasks: [{ id: response.body.data.task_id }],
    });
  });

  it('appends the turn to the thread named by thread_id', async () => {
    const caller = await t.caller(['member']);
    const first = await chat(t, caller, 'coo', { message: 'First turn' });
    const threadId = (await t.graphql(TaskQuery, { id: first.body.data.task_id }, caller)).data?.task
      ?.threadId as string;

    const second = await chat(t, caller, 'COO', { message: 'Second turn', thread_id: threadId });

    expect(second.status).toBe(202);
    const thread = await t.graphql(ThreadQuery, { id: threadId }, caller);
    expect(thread.data?.thread?.messages.map((message) => message.body)).toEqual([
      'First turn',
      'Second turn',
    ]);
    expect(thread.data?.thread?.tasks).toHaveLength(2);
  });

  it('stores no thread and no turn when persist_thread is false, and still queues the task', async () => {
    const caller = await t.caller(['member']);

    const response = await chat(t, caller, 'cpo', { message: 'Stored elsewhere', persist_thread: false });

    expect(response.status).toBe(202);
    expect(await storedRows(t, caller.tenantId)).toMatchObject({ tasks: 1, threads: 0, messages: 0 });
  });

  it('links the task to the thread without storing the turn again when persist_thread is false', async () => {
    const caller = await t.caller(['member']);
    const first = await chat(t, caller, 'cpo', { message: 'Stored here' });
    const threadId = (await t.graphql(TaskQuery, { id: first.body.data.task_id }, caller)).data?.task
      ?.threadId as string;

    const second = await chat(t, caller, 'cpo', {
      message: 'Stored by the caller',
      thread_id: threadId,
      persist_thread: false,
    });

    const task = await t.graphql(TaskQuery, { id: second.body.data.task_id }, caller);
    expect(task.data?.task?.threadId).toBe(threadId);
    expect(await storedRows(t, caller.tenantId)).toMatchObject({ tasks: 2, threads: 1, messages: 1 });
  });

  it('queues a message for a paused role', async () => {
    const caller = await t.caller(['chairman']);
    await chat(t, caller, 'clo', { message: 'warm up the tenant' });
    await t.db.prisma.agentRole.update({
      where: { tenantId_role: { tenantId: caller.tenantId, role: 'clo' } },
      data: { paused: true, pausedAt: new Date() },
    });

    const response = await chat(t, caller, 'clo', { message: 'Check the contract' });

    expect(response.status).toBe(202);
    expect(response.body.data.status).toBe('pending');
  });

  it.each(SAMPLES)(
    'stores a $name attachment content-addressed under DATA_DIR',
    async ({ mimeType, bytes }) => {
      const caller = await t.caller(['member']);

      const response = await chat(t, caller, 'cmo', {
        message: 'See attached',
        attachments: [{ data: b64(bytes), mime_type: mimeType, filename: 'brief.bin' }],
      });

      expect(response.status).toBe(202);
      expect(await filesUnder(t.dataDir)).toContain(blobPath(sha256(bytes)));
      const task = await t.graphql(TaskQuery, { id: response.body.data.task_id }, caller);
      expect(task.data?.task?.attachments).toEqual([
        { position: 0, sha256: sha256(bytes), mimeType, filename: 'brief.bin', size: bytes.length },
      ]);
    },
  );

  it('acknowledges the attachments it queued', async () => {
    const response = await chat(t, chairman, 'cmo', {
      message: 'Two files',
      attachments: [png(), { data: b64(PDF), mime_type: 'application/pdf' }],
    });

    expect(response.body.data.acknowledgment).toBe(
      'Your message with 2 attachments is queued for the CMO agent.',
    );
  });

  it('normalises the MIME type case', async () => {
    const caller = await t.caller(['member']);
    const response = await chat(t, caller, 'cmo', {
      message: 'Upper case',
      attachments: [{ data: b64(GIF89A), mime_type: ' IMAGE/GIF ' }],
    });

    const task = await t.graphql(TaskQuery, { id: response.body.data.task_id }, caller);
    expect(task.data?.task?.attachments[0]?.mimeType).toBe('image/gif');
  });

  it('stores a filename with e-mail, card, phone and SSN-like numbers redacted', async () => {
    const caller = await t.caller(['member']);
    const filename = 'jane.doe@example.com card 4111 1111 1111 1111 tel +44 20 7946 0958 ssn 123-45-6789.pdf';

    const response = await chat(t, caller, 'cfo', {
      message: 'Invoice',
      attachments: [{ data: b64(PDF), mime_type: 'application/pdf', filename }],
    });

    const task = await t.graphql(TaskQuery, { id: response.body.data.task_id }, caller);
    expect(task.data?.task?.attachments[0]?.filename).toBe('[email] card [card] tel [phone] ssn [ssn].pdf');
  });

  it('takes 5 attachments of 10 MiB each', async () => {
    const caller = await t.caller(['member']);
    const files = Array.from({ length: 5 }, (_, index) =>
      Buffer.concat([PDF, Buffer.alloc(MAX_ATTACHMENT_BYTES - PDF.length, index)]),
    );

    const response = await chat(t, caller, 'clo', {
      message: 'The data room',
      attachments: files.map((bytes, index) => ({
        data: b64(bytes),
        mime_type: 'application/pdf',
        filename: `volume-${index}.pdf`,
      })),
    });

    expect(response.status).toBe(202);
    const stored = await filesUnder(t.dataDir);
    expect(files.every((bytes) => stored.includes(blobPath(sha256(bytes))))).toBe(true);
  });

  it('keeps one file for the same bytes sent twice', async () => {
    const caller = await t.caller(['member']);
    const before = (await filesUnder(t.dataDir)).length;
    const bytes = Buffer.concat([PDF, Buffer.from(`% ${randomUUID()}\n`)]);

    await chat(t, caller, 'cfo', {
      message: 'One',
      attachments: [{ data: b64(bytes), mime_type: 'application/pdf' }],
    });
    await chat(t, caller, 'cfo', {
      message: 'Two',
      attachments: [{ data: b64(bytes), mime_type: 'application/pdf' }],
    });

    expect((await filesUnder(t.dataDir)).length).toBe(before + 1);
    expect(await storedRows(t, caller.tenantId)).toMatchObject({ tasks: 2, attachments: 2 });
  });
});

describe('POST /api/v1/agents/{role}/chat failures', () => {
  it('answers 401 with WWW-Authenticate without a token', async () => {
    const response = await t.rest('POST', '/api/v1/agents/ceo/chat', { body: { message: 'hi' } });

    expect(response.status).toBe(401);
    expect(response.headers.get('www-authenticate')).toBe('Bearer');
  });

  it('answers 413 for a body over 72 MiB', async () => {
    const response = await chat(t, chairman, 'ceo', {
      message: 'hi',
      attachments: [{ data: 'A'.repeat(72 * 1024 * 1024), mime_type: 'application/pdf' }],
    });

    expect(response.status).toBe(413);
  });

  it('answers 404 for a role the tenant does not have', async () => {
    const response = await chat(t, chairman, 'cso', { message: 'hi' });

    expect(response.status).toBe(404);
    expect(response.body).toMatchInlineSnapshot(`
      {
        "detail": "Unknown agent role 'cso'",
      }
    `);
  });

  it('answers 404 for a role another tenant registered', async () => {
    const other = await t.caller(['chairman']);
    await t.app.services.tenants.ensure(other.tenantId);
    await t.db.prisma.agentRole.create({ data: { tenantId: other.tenantId, role: 'sales' } });

    const response = await chat(t, chairman, 'sales', { message: 'hi' });

    expect(response.status).toBe(404);
  });

  it('answers 404 for a thread_id that names no thread', async () => {
    const id = '00000000-0000-4000-8000-000000000000';
    const response = await chat(t, chairman, 'ceo', { message: 'hi', thread_id: id });

    expect(response.status).toBe(404);
    expect(response.body).toEqual({ detail: `Thread ${id} not found` });
  });

  it('answers 404 for a thread of another tenant', async () => {
    const other = await t.caller(['member']);
    const first = await chat(t, other, 'ceo', { message: 'theirs' });
    const threadId = (await t.graphql(TaskQuery, { id: first.body.data.task_id }, other)).data?.task
      ?.threadId as string;

    const response = await chat(t, chairman, 'ceo', { message: 'mine', thread_id: threadId });

    expect(response.status).toBe(404);
  });

  it('answers 409 for a thread of another role', async () => {
    const caller = await t.caller(['member']);
    const first = await chat(t, caller, 'ceo', { message: 'to the CEO' });
    const threadId = (await t.graphql(TaskQuery, { id: first.body.data.task_id }, caller)).data?.task
      ?.threadId as string;

    const response = await chat(t, caller, 'cfo', { message: 'to the CFO', thread_id: threadId });

    expect(response.status).toBe(409);
    expect(response.body).toEqual({
      detail: `Thread ${threadId} belongs to the agent role 'ceo', not 'cfo'`,
    });
  });

  it('stores nothing, not even the attachment bytes, when the thread is refused', async () => {
    const caller = await t.caller(['member']);
    const bytes = Buffer.concat([PDF, Buffer.from(`% ${randomUUID()}\n`)]);

    const response = await chat(t, caller, 'ceo', {
      message: 'hi',
      thread_id: randomUUID(),
      attachments: [{ data: b64(bytes), mime_type: 'application/pdf' }],
    });

    expect(response.status).toBe(404);
    expect(await storedRows(t, caller.tenantId)).toEqual({
      tasks: 0,
      threads: 0,
      messages: 0,
      attachments: 0,
      outbox: 0,
    });
    expect(await filesUnder(t.dataDir)).not.toContain(blobPath(sha256(bytes)));
  });
});
