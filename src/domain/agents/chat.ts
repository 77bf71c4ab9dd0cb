import { randomUUID } from 'node:crypto';
import { enqueueEventFrom } from '../../events/outbox.js';
import { Prisma } from '../../generated/prisma/client.js';
import type { Logger } from '../../logger.js';
import type { Actor } from '../actor.js';
import { conflict, notFound } from '../errors.js';
import type { InspectedAttachment } from './attachments.js';
import type { BlobStore } from './blob-store.js';
import { findAgentRole, unknownAgentRole } from './registry.js';
import { normalizeRole } from './roles.js';
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

/** Where attachment bytes are kept, and where a failure to remove them again is logged. */
export interface ChatDependencies {
  blobs: BlobStore;
  log: Logger;
}

export interface ChatReceipt {
  taskId: string;
  agentRole: string;
  status: 'pending';
  acknowledgment: string;
  /** The thread the turn belongs to, or null when it belongs to none. */
  threadId: string | null;
  /** When the task was created (the database's clock, as every task's). */
  createdAt: Date;
}

/**
 * Queues a chat message as a pending task for an agent role. Without attachments that is one statement
 * (queueChatTask) in a transaction. With attachments their bytes are written first, and the same
 * transaction also holds the blobs (holdBlobs); the bytes are
 * removed again when it fails and nothing else references them. Decoded attachment bytes are only read, and
 * not after the message is stored or failed: the intake reuses their memory (src/http/attachments.ts).
 */
export async function sendChatMessage(
  context: Actor,
  { blobs, log }: ChatDependencies,
  command: ChatCommand,
): Promise<ChatReceipt> {
  const role = normalizeRole(command.role);
  const chat = chatRows(context, role, command);
  const digests = [...new Set(command.attachments.map((attachment) => attachment.sha256))];
  try {
    for (const attachment of command.attachments) await blobs.put(attachment.content, attachment.sha256);
    // A refusal is explained by a read afterwards; should that read find nothing wrong (the role was
    // registered in between), the statement runs again.
    for (let attempt = 1; ; attempt++) {
      // Always in a transaction, whose COMMIT is sent only once the statement has answered: a statement
      // sent on its own commits by itself, so one held up by a hung connection could still be stored
      // after the client was answered 503 (test/server/database-outage.test.ts).
      const createdAt = await context.prisma.$transaction(async (tx) => {
        const queued = await queueChatTask(tx, chat);
        if (queued && command.attachments.length > 0) await holdBlobs(tx, blobs, command.attachments);
        return queued;
      });
      if (createdAt) {
        return {
          taskId: chat.taskId,
          agentRole: role,
          status: 'pending',
          acknowledgment: acknowledgment(role, command.attachments.length),
          threadId: chat.taskThreadId,
          createdAt,
        };
      }
      const refusal = await refusalOf(context, command.role, command.threadId);
      if (refusal) throw refusal;
      if (attempt === 3) throw new Error(`chat message for '${role}' refused three times without a reason`);
    }
  } catch (error) {
    if (digests.length > 0) {
      await releaseUnreferencedBlobs(context, blobs, digests).catch((cleanupError: unknown) => {
        log.error({ err: cleanupError }, 'could not remove attachment blobs of a failed chat message');
      });
    }
    throw error;
  }
}

/**
 * Everything a chat message writes, decided before the statement runs (ids included). A routine's
 * occurrence writes the same rows (src/domain/routines/tick.ts), with no thread, its cap and its routine.
 */
export interface ChatRows {
  tenantId: string;
  sub: string;
  role: string;
  message: string;
  /** The thread named by the caller, if any. */
  threadId: string | null;
  /** The id of the thread created when the turn is stored and no thread was named. */
  newThreadId: string;
  messageId: string;
  persistThread: boolean;
  taskId: string;
  /** The thread the task belongs to: null when the turn is not stored and no thread was named. */
  taskThreadId: string | null;
  updatedAt: Date;
  attachments: readonly InspectedAttachment[];
  /** The cap the task carries (USD, a decimal string); null or omitted: none of its own. */
  costCapUsd?: string | null;
  /** The routine whose occurrence queues it; null or omitted: none. */
  routineId?: string | null;
}

function chatRows(context: Actor, role: string, command: ChatCommand): ChatRows {
  const threadId = command.threadId ?? null;
  const newThreadId = randomUUID();
  return {
    tenantId: context.viewer.tenantId,
    sub: context.viewer.sub,
    role,
    message: command.message,
    threadId,
    newThreadId,
    messageId: randomUUID(),
    persistThread: command.persistThread,
    taskId: randomUUID(),
    taskThreadId: threadId ?? (command.persistThread ? newThreadId : null),
    updatedAt: new Date(),
    attachments: command.attachments,
  };
}

/**
 * Writes a chat message in one statement: the task, the turn in its thread (created, or touched when
 * named), the attachment rows and the TASK_UPDATED event, each only if the tenant has the role and a
 * named thread is the tenant's and of that role. The task's creation time when it wrote them; null when it
 * wrote nothing.
 */
export async function queueChatTask(db: Prisma.TransactionClient, chat: ChatRows): Promise<Date | null> {
  const { tenantId, sub, updatedAt } = chat;
  const event = enqueueEventFrom(
    'task',
    {
      type: 'TASK_UPDATED',
      tenantId,
      payload: taskEventPayload({
        id: chat.taskId,
        role: chat.role,
        status: 'pending',
        attempts: 0,
        updatedAt,
        parentTaskId: null,
        rootTaskId: null,
      }),
    },
    // The task's creation time (the database's clock), for the receipt.
    Prisma.sql`(SELECT created_at FROM task) AS created_at`,
  );
  const rows = await db.$queryRaw<{ created_at: Date }[]>`
    WITH accepted AS (
      SELECT a.role FROM agent_roles AS a
      WHERE a.tenant_id = ${tenantId}::uuid AND a.role = ${chat.role}
        AND (${chat.threadId}::uuid IS NULL OR EXISTS (
          SELECT 1 FROM threads AS t
          WHERE t.id = ${chat.threadId}::uuid AND t.tenant_id = a.tenant_id AND t.role = a.role))
    ), touched AS (
      UPDATE threads SET updated_at = ${updatedAt}::timestamptz
      WHERE ${chat.persistThread} AND id = ${chat.threadId}::uuid AND EXISTS (SELECT 1 FROM accepted)
      RETURNING id
    ), created AS (
      INSERT INTO threads (id, tenant_id, role, created_by, updated_at)
      SELECT ${chat.newThreadId}::uuid, ${tenantId}::uuid, role, ${sub}, ${updatedAt}::timestamptz
      FROM accepted WHERE ${chat.persistThread} AND ${chat.threadId}::uuid IS NULL
      RETURNING id
    ), turn AS (
      INSERT INTO thread_messages (id, tenant_id, thread_id, author, body)
      SELECT ${chat.messageId}::uuid, ${tenantId}::uuid, id, ${sub}, ${chat.message}
      FROM (SELECT id FROM touched UNION ALL SELECT id FROM created) AS thread
      RETURNING id
    ), task AS (
      INSERT INTO tasks (id, tenant_id, role, thread_id, message, created_by, updated_at, cost_cap_usd, routine_id)
      SELECT ${chat.taskId}::uuid, ${tenantId}::uuid, role, ${chat.taskThreadId}::uuid, ${chat.message},
             ${sub}, ${updatedAt}::timestamptz, ${chat.costCapUsd ?? null}::numeric, ${chat.routineId ?? null}::uuid
      FROM accepted
      RETURNING id, created_at
    ), attached AS (
      INSERT INTO attachments (id, tenant_id, task_id, message_id, position, sha256, mime_type, filename, size)
      SELECT gen_random_uuid(), ${tenantId}::uuid, task.id, (SELECT id FROM turn), f.position - 1,
             f.sha256, f.mime_type, f.filename, f.size
      FROM task, unnest(
        ${chat.attachments.map((attachment) => attachment.sha256)}::text[],
        ${chat.attachments.map((attachment) => attachment.mimeType)}::text[],
        ${chat.attachments.map((attachment) => attachment.filename)}::text[],
        ${chat.attachments.map((attachment) => attachment.size)}::int[]
      ) WITH ORDINALITY AS f(sha256, mime_type, filename, size, position)
    )
    ${event.sql}`;
  return rows[0]?.created_at ?? null;
}

/** Why the tenant's chat statement wrote nothing: the role or the named thread; null when neither. */
async function refusalOf(
  context: Actor,
  rawRole: string,
  threadId: string | null | undefined,
): Promise<Error | null> {
  const agentRole = await findAgentRole(context, rawRole);
  if (!agentRole) return unknownAgentRole(rawRole);
  if (!threadId) return null;
  const thread = await context.prisma.thread.findFirst({
    where: { id: threadId, tenantId: context.viewer.tenantId },
  });
  if (!thread) return notFound(`Thread ${threadId} not found`);
  if (thread.role !== agentRole.role) {
    return conflict(
      `Thread ${thread.id} belongs to the agent role '${thread.role}', not '${agentRole.role}'`,
    );
  }
  return null;
}

/** The `acknowledgment` of an accepted chat message (also the REST documentation's example). */
export function acknowledgment(role: string, attachments: number): string {
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
export async function holdBlobs(
  tx: Prisma.TransactionClient,
  blobs: BlobStore,
  attachments: readonly InspectedAttachment[],
) {
  for (const attachment of attachments) {
    await tx.$executeRaw`SELECT pg_advisory_xact_lock_shared(hashtextextended(${blobLockKey(attachment.sha256)}, 0))`;
    if (!(await blobs.has(attachment.sha256))) await blobs.put(attachment.content, attachment.sha256);
  }
}

/**
 * Removes the blobs no attachment and no deliverable references, each under its exclusive lock.
 */
export async function releaseUnreferencedBlobs(context: Actor, blobs: BlobStore, digests: readonly string[]) {
  for (const sha256 of digests) {
    await context.prisma.$transaction(async (tx) => {
      await tx.$executeRaw`SELECT pg_advisory_xact_lock(hashtextextended(${blobLockKey(sha256)}, 0))`;
      const [row] = await tx.$queryRaw<{ used: boolean }[]>`
        SELECT EXISTS (SELECT 1 FROM attachments WHERE sha256 = ${sha256})
          OR EXISTS (SELECT 1 FROM task_deliverables WHERE sha256 = ${sha256} AND kind = 'file') AS used`;
      if (!row?.used) await blobs.remove(sha256);
    });
  }
}
