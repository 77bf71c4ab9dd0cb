import type { Context } from '../../context.js';
import { conflict, notFound } from '../../errors.js';
import { enqueueEvent } from '../../events/outbox.js';
import type { Prisma } from '../../generated/prisma/client.js';
import type { InspectedAttachment } from './attachments.js';
import type { BlobStore } from './blob-store.js';
import { type AuthedContext, requireAgentRole } from './registry.js';
import { taskEventPayload } from './task-events.js';

export interface ChatCommand {
  role: string;
  message: string;
  /** Already inspected: valid type, signature, size and filename. */
  attachments: readonly InspectedAttachment[];
  threadId?: string | null | undefined;
  /** False when the caller already stored the turn itself. */
  persistThread: boolean;
}

export interface ChatReceipt {
  taskId: string;
  agentRole: string;
  status: 'pending';
  acknowledgment: string;
  /** The thread the turn belongs to, or null when it belongs to none. */
  threadId: string | null;
}

/**
 * Queues a chat message as a pending task for an agent role. Every check that can refuse the request runs
 * before anything is written; attachment bytes are written just before the transaction, and removed again
 * when it fails and nothing else references them.
 */
export async function sendChatMessage(context: AuthedContext, command: ChatCommand): Promise<ChatReceipt> {
  const { tenantId, sub } = context.viewer;
  const agentRole = await requireAgentRole(context, command.role);
  const role = agentRole.role;
  const thread = command.threadId
    ? await context.prisma.thread.findFirst({ where: { id: command.threadId, tenantId } })
    : null;
  if (command.threadId && !thread) throw notFound(`Thread ${command.threadId} not found`);
  if (thread && thread.role !== role) {
    throw conflict(`Thread ${thread.id} belongs to the agent role '${thread.role}', not '${role}'`);
  }

  const blobs = context.services.blobs;
  const digests = [...new Set(command.attachments.map((attachment) => attachment.sha256))];
  try {
    for (const attachment of command.attachments) await blobs.put(attachment.bytes);
    const receipt = await context.prisma.$transaction(async (tx) => {
      await holdBlobs(tx, blobs, command.attachments);
      let threadId = thread?.id ?? null;
      let messageId: string | null = null;
      if (command.persistThread) {
        if (thread) await tx.thread.update({ where: { id: thread.id }, data: { updatedAt: new Date() } });
        else threadId = (await tx.thread.create({ data: { tenantId, role, createdBy: sub } })).id;
        messageId = (
          await tx.threadMessage.create({
            data: { tenantId, threadId: threadId as string, author: sub, body: command.message },
          })
        ).id;
      }
      const task = await tx.task.create({
        data: { tenantId, role, threadId, message: command.message, createdBy: sub },
      });
      if (command.attachments.length > 0) {
        await tx.attachment.createMany({
          data: command.attachments.map((attachment, position) => ({
            tenantId,
            taskId: task.id,
            messageId,
            position,
            sha256: attachment.sha256,
            mimeType: attachment.mimeType,
            filename: attachment.filename,
            size: attachment.size,
          })),
        });
      }
      await enqueueEvent(tx, { type: 'TASK_UPDATED', tenantId, payload: taskEventPayload(task) });
      return {
        taskId: task.id,
        agentRole: role,
        status: 'pending' as const,
        acknowledgment: acknowledgment(role, command.attachments.length),
        threadId,
      };
    });
    return receipt;
  } catch (error) {
    await releaseUnreferencedBlobs(context, digests).catch((cleanupError: unknown) => {
      context.log.error({ err: cleanupError }, 'could not remove attachment blobs of a failed chat message');
    });
    throw error;
  }
}

function acknowledgment(role: string, attachments: number): string {
  const files = attachments === 0 ? '' : ` with ${attachments} attachment${attachments === 1 ? '' : 's'}`;
  return `Your message${files} is queued for the ${role.toUpperCase()} agent.`;
}

/** Advisory lock key of one blob: chat transactions share it, removal takes it exclusively. */
const blobLockKey = (sha256: string) => `attachment-blob:${sha256}`;

/**
 * Holds a shared lock on each blob until the transaction ends, so a concurrent removal (of another request
 * that failed with the same bytes) waits for this commit and then sees the reference; a blob that such a
 * removal deleted before the lock was taken is written again.
 */
async function holdBlobs(
  tx: Prisma.TransactionClient,
  blobs: BlobStore,
  attachments: readonly InspectedAttachment[],
) {
  for (const attachment of attachments) {
    await tx.$executeRaw`SELECT pg_advisory_xact_lock_shared(hashtextextended(${blobLockKey(attachment.sha256)}, 0))`;
    if (!(await blobs.has(attachment.sha256))) await blobs.put(attachment.bytes);
  }
}

/** Removes the blobs no attachment row references, each under its exclusive lock. */
async function releaseUnreferencedBlobs(context: Context, digests: readonly string[]) {
  for (const sha256 of digests) {
    await context.prisma.$transaction(async (tx) => {
      await tx.$executeRaw`SELECT pg_advisory_xact_lock(hashtextextended(${blobLockKey(sha256)}, 0))`;
      const [row] = await tx.$queryRaw<{ used: boolean }[]>`
        SELECT EXISTS (SELECT 1 FROM attachments WHERE sha256 = ${sha256}) AS used`;
      if (!row?.used) await context.services.blobs.remove(sha256);
    });
  }
}
