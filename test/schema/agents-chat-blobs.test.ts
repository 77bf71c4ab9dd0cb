import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Viewer } from '../../src/auth/viewer.js';
import { type InspectedAttachment, inspectAttachment } from '../../src/domain/agents/attachments.js';
import { sendChatMessage } from '../../src/domain/agents/chat.js';
import type { AuthedContext } from '../../src/domain/agents/registry.js';
import { PDF } from '../domain/agents/attachment-samples.js';
import { createTestApp, type TestApp } from '../support/app.js';
import { storedRows } from './agents-support.js';

let t: TestApp;

beforeAll(async () => {
  t = await createTestApp();
});
afterAll(() => t.close());

/** A PDF no other test sends, already inspected. */
function uniquePdf(): InspectedAttachment {
  const result = inspectAttachment({
    data: Buffer.concat([PDF, Buffer.from(`% ${randomUUID()}\n`)]).toString('base64'),
    mimeType: 'application/pdf',
  });
  if (!result.ok) throw new Error('sample PDF refused');
  return result.value;
}

/** A context whose chat transaction runs completely and then fails to commit, once. */
async function contextFailingOnce(): Promise<AuthedContext> {
  const viewer: Viewer = { sub: 'member-1', tenantId: randomUUID(), roles: ['member'] };
  await t.app.services.tenants.ensure(viewer.tenantId);
  const prisma = t.app.services.prisma;
  let failed = false;
  const failing = new Proxy(prisma, {
    get(target, property) {
      if (property === '$transaction' && !failed) {
        failed = true;
        return (work: (tx: unknown) => Promise<unknown>) =>
          target.$transaction(async (tx) => {
            await work(tx);
            throw new Error('commit failed');
          });
      }
      const value = Reflect.get(target, property);
      return typeof value === 'function' ? value.bind(target) : value;
    },
  });
  return {
    requestId: randomUUID(),
    viewer,
    prisma: failing,
    services: t.app.services,
    log: t.app.services.logger,
  };
}

describe('attachment bytes of a chat message whose transaction fails', () => {
  it('are removed when nothing references them', async () => {
    const context = await contextFailingOnce();
    const attachment = uniquePdf();

    await expect(
      sendChatMessage(context, {
        role: 'ceo',
        message: 'hi',
        attachments: [attachment],
        persistThread: true,
      }),
    ).rejects.toThrow('commit failed');

    expect(await t.app.services.blobs.has(attachment.sha256)).toBe(false);
    expect(await storedRows(t, context.viewer.tenantId)).toEqual({
      tasks: 0,
      threads: 0,
      messages: 0,
      attachments: 0,
      outbox: 0,
    });
  });

  it('stay when an attachment of another task references them', async () => {
    const attachment = uniquePdf();
    const earlier = await contextFailingOnce();
    await expect(
      sendChatMessage(earlier, { role: 'ceo', message: 'x', attachments: [attachment], persistThread: true }),
    ).rejects.toThrow();
    await sendChatMessage(earlier, {
      role: 'ceo',
      message: 'kept',
      attachments: [attachment],
      persistThread: true,
    });
    const later = await contextFailingOnce();

    await expect(
      sendChatMessage(later, {
        role: 'cfo',
        message: 'lost',
        attachments: [attachment],
        persistThread: false,
      }),
    ).rejects.toThrow();

    expect(await t.app.services.blobs.has(attachment.sha256)).toBe(true);
  });
});
