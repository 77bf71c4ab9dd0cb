import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Viewer } from '../../src/auth/viewer.js';
import type { Actor } from '../../src/domain/actor.js';
import type { InspectedAttachment } from '../../src/domain/agents/attachments.js';
import { type ChatCommand, sendChatMessage } from '../../src/domain/agents/chat.js';
import {
  pooledDecodeBytes,
  receiveAttachment,
  releaseDecoded,
  sendWithAttachments,
} from '../../src/http/attachments.js';
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
  const result = receiveAttachment({
    data: Buffer.concat([PDF, Buffer.from(`% ${randomUUID()}\n`)]).toString('base64'),
    mimeType: 'application/pdf',
  });
  if (!result.ok) throw new Error('sample PDF refused');
  return result.value;
}

/** An actor whose chat transaction runs completely and then fails to commit, once. */
async function actorFailingOnce(): Promise<Actor> {
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
  };
}

const send = (actor: Actor, command: ChatCommand) =>
  sendChatMessage(actor, { blobs: t.app.services.blobs, log: t.app.services.logger }, command);

describe('attachment bytes of a chat message whose transaction fails', () => {
  it('are removed when nothing references them', async () => {
    const actor = await actorFailingOnce();
    const attachment = uniquePdf();

    await expect(
      send(actor, {
        role: 'ceo',
        message: 'hi',
        attachments: [attachment],
        persistThread: true,
      }),
    ).rejects.toThrow('commit failed');

    expect(await t.app.services.blobs.has(attachment.sha256)).toBe(false);
    expect(await storedRows(t, actor.viewer.tenantId)).toEqual({
      tasks: 0,
      threads: 0,
      messages: 0,
      attachments: 0,
      outbox: 0,
    });
  });

  it('stay when an attachment of another task references them', async () => {
    const attachment = uniquePdf();
    const earlier = await actorFailingOnce();
    await expect(
      send(earlier, { role: 'ceo', message: 'x', attachments: [attachment], persistThread: true }),
    ).rejects.toThrow();
    await send(earlier, {
      role: 'ceo',
      message: 'kept',
      attachments: [attachment],
      persistThread: true,
    });
    const later = await actorFailingOnce();

    await expect(
      send(later, {
        role: 'cfo',
        message: 'lost',
        attachments: [attachment],
        persistThread: false,
      }),
    ).rejects.toThrow();

    expect(await t.app.services.blobs.has(attachment.sha256)).toBe(true);
  });
});

describe('decoded attachment bytes of a chat message', () => {
  /** Sends as the field does: the transport gives the decoded buffers back once the message is done. */
  const sendDecoded = (actor: Actor, command: ChatCommand) =>
    sendWithAttachments(command.attachments, () => send(actor, command));

  /** A 2 MiB PDF no other test sends, inspected: its bytes decoded into a kept buffer. */
  function largePdf() {
    const bytes = Buffer.concat([PDF, Buffer.alloc(2 * 1024 * 1024, `% ${randomUUID()}\n`)]);
    const result = receiveAttachment({ data: bytes.toString('base64'), mimeType: 'application/pdf' });
    if (!result.ok) throw new Error('sample PDF refused');
    return { bytes, attachment: result.value };
  }

  it('are stored as sent and their buffer given back, whether the message is stored or fails', async () => {
    const viewer: Viewer = { sub: 'member-1', tenantId: randomUUID(), roles: ['member'] };
    await t.app.services.tenants.ensure(viewer.tenantId);
    const actor: Actor = { requestId: randomUUID(), viewer, prisma: t.app.services.prisma };
    // A buffer is kept from here on: each message below takes it (or one like it) and gives it back.
    releaseDecoded(largePdf().attachment.content);
    const kept = pooledDecodeBytes();

    const stored = largePdf();
    await sendDecoded(actor, {
      role: 'cfo',
      message: 'hi',
      attachments: [stored.attachment],
      persistThread: false,
    });
    expect(pooledDecodeBytes()).toBe(kept);
    expect((await t.app.services.blobs.get(stored.attachment.sha256))?.equals(stored.bytes)).toBe(true);

    const failed = largePdf();
    await expect(
      sendDecoded(await actorFailingOnce(), {
        role: 'cfo',
        message: 'hi',
        attachments: [failed.attachment],
        persistThread: false,
      }),
    ).rejects.toThrow('commit failed');
    expect(pooledDecodeBytes()).toBe(kept);
  });
});
