import { randomUUID } from 'node:crypto';
import { recordAudit } from '../../audit.js';
import { RELAY_LOCK_SQL } from '../../events/relay.js';
import type { Prisma, PrismaClient, Webhook, WebhookDelivery } from '../../generated/prisma/client.js';
import type { Actor } from '../actor.js';
import { findAgentRole, unknownAgentRole } from '../agents/registry.js';
import { roleScope } from '../agents/role-binding.js';
import { type EgressClient, EgressError } from '../connectors/egress/index.js';
import type { Keyring } from '../connectors/sealing.js';
import { conflict, invalidInput, notConfigured, notFound } from '../errors.js';
import { newWebhookSecret, ROTATION_OVERLAP_MS, sealWebhookSecret } from './signing.js';

const KEY_NOT_SET =
  'Webhook secrets cannot be stored: CONNECTOR_SECRETS_KEY is not set (see docs/operations.md, "Connector credentials")';

/** What registering a webhook uses of the running instance. */
export interface WebhookRegistration {
  /** Seals the webhook's secret (CONNECTOR_SECRETS_KEY). */
  keyring: Keyring;
  /** The guarded client deliveries leave by: its address checks judge the URL. */
  egress: Pick<EgressClient, 'checkTarget'>;
}

/** A webhook with its signing secret, answered only when the secret is created or rotated. */
export interface WebhookWithSecret {
  webhook: Webhook;
  secret: string;
}

export const webhookNotFound = (id: string) => notFound(`Webhook ${id} not found`);
export const deliveryNotFound = (id: string) => notFound(`Webhook delivery ${id} not found`);

function refusedUrl(url: string, reason: string) {
  return invalidInput([
    {
      type: 'value_error',
      loc: ['input', 'url'],
      msg: `Value error, ${reason}`,
      input: url,
      ctx: { error: reason },
    },
  ]);
}

function usableKeyring(keyring: Keyring) {
  if (keyring.length === 0) throw notConfigured(KEY_NOT_SET);
  return keyring;
}

/**
 * Registers a delivery URL for one agent role of the tenant (or, without a role, for every event) and
 * answers its new secret, which is stored sealed and never shown again. The URL has passed the same
 * static checks as a connector's base_url; here its host is resolved and its addresses checked by the
 * egress guard, so a name that points inside the network is refused now, with the reason.
 */
export async function createWebhook(
  context: Actor,
  { keyring: keys, egress }: WebhookRegistration,
  input: { url: string; role: string | null },
): Promise<WebhookWithSecret> {
  const keyring = usableKeyring(keys);
  let role: string | null = null;
  if (input.role !== null) {
    const agentRole = await findAgentRole(context, input.role);
    if (!agentRole) throw unknownAgentRole(input.role);
    role = agentRole.role;
  }
  await checkTarget(egress, input.url);
  return insertWebhook(context, keyring, { role, url: input.url }, { url: input.url, role });
}

/**
 * Stores a new webhook of the caller's tenant with a fresh secret, sealed, and its audit row, in one
 * transaction; `before` runs first in it (a limit's count). Answers the webhook and its secret, shown once.
 */
async function insertWebhook(
  context: Actor,
  keyring: Keyring,
  target: { url: string; role?: string | null; taskId?: string; notificationToken?: string | null },
  details: Record<string, unknown>,
  before?: (tx: Prisma.TransactionClient) => Promise<void>,
): Promise<WebhookWithSecret> {
  const { tenantId, sub } = context.viewer;
  const id = randomUUID();
  const secret = newWebhookSecret();
  const sealed = sealWebhookSecret(keyring, tenantId, id, secret);
  const webhook = await context.prisma.$transaction(async (tx) => {
    await before?.(tx);
    const created = await tx.webhook.create({
      data: { id, tenantId, ...target, keyId: sealed.keyId, sealedSecret: sealed.sealed, createdBy: sub },
    });
    await recordAudit(tx, context, {
      action: 'webhook.created',
      targetType: 'webhook',
      targetId: id,
      outcome: 'created',
      details,
    });
    return created;
  });
  return { webhook, secret };
}

/** How many webhooks (A2A push notification configs) one task may have. */
export const MAX_TASK_WEBHOOKS = 10;

export const taskNotFound = (id: string) => notFound(`Task ${id} not found`);

/**
 * The task's webhooks the caller may see: of a task it may read (its tenant's, of its roles when its token
 * is bound, of `role` when one is named), as a Prisma `where`.
 */
export function taskWebhookScope(context: Actor, taskId: string, role: string | null) {
  return { taskId, tenantId: context.viewer.tenantId, task: roleScope(context.viewer, role) };
}

/**
 * Registers a webhook of one task (an A2A push notification config): it receives that task's status updates
 * and nothing else, with the client's `token` sent back as X-A2A-Notification-Token. The task must be one
 * the caller may read (and of `role` when named), else NOT_FOUND; the URL is judged as every webhook's.
 * Answers its new secret, once.
 */
export async function createTaskWebhook(
  context: Actor,
  { keyring: keys, egress }: WebhookRegistration,
  input: { taskId: string; role: string | null; url: string; token: string | null },
): Promise<WebhookWithSecret> {
  const keyring = usableKeyring(keys);
  const task = await context.prisma.task.findFirst({
    where: { id: input.taskId, ...roleScope(context.viewer, input.role) },
    select: { id: true, role: true },
  });
  if (!task) throw taskNotFound(input.taskId);
  await checkTarget(egress, input.url);
  return insertWebhook(
    context,
    keyring,
    { taskId: task.id, notificationToken: input.token, url: input.url },
    { url: input.url, task_id: task.id, role: task.role },
    async (tx) => {
      // Under the task's row lock, so that concurrent creations count each other.
      await tx.$queryRaw`SELECT id FROM tasks WHERE id = ${task.id}::uuid FOR UPDATE`;
      const existing = await tx.webhook.count({ where: { taskId: task.id } });
      if (existing >= MAX_TASK_WEBHOOKS) {
        throw conflict(
          `Task ${task.id} already has ${MAX_TASK_WEBHOOKS} push notification configs (its limit)`,
        );
      }
    },
  );
}

/** Deletes a task's webhook (its pending deliveries with it: none is sent after). NOT_FOUND when not the caller's. */
export async function deleteTaskWebhook(
  context: Actor,
  input: { taskId: string; id: string; role: string | null },
): Promise<Webhook> {
  return context.prisma.$transaction(async (tx) => {
    const webhook = await tx.webhook.findFirst({
      where: { id: input.id, ...taskWebhookScope(context, input.taskId, input.role) },
    });
    if (!webhook) throw webhookNotFound(input.id);
    await tx.webhook.delete({ where: { id: webhook.id } });
    await recordAudit(tx, context, {
      action: 'webhook.deleted',
      targetType: 'webhook',
      targetId: webhook.id,
      outcome: 'deleted',
      details: { task_id: input.taskId },
    });
    return webhook;
  });
}

async function checkTarget(egress: WebhookRegistration['egress'], url: string): Promise<void> {
  try {
    await egress.checkTarget(url);
  } catch (error) {
    if (error instanceof EgressError) throw refusedUrl(url, error.message);
    throw error;
  }
}

/**
 * Replaces the webhook's secret and answers the new one. The previous secret keeps signing beside it for
 * ROTATION_OVERLAP_MS (every delivery carries both signatures meanwhile), so receivers can switch over.
 */
export async function rotateWebhookSecret(
  context: Actor,
  keys: Keyring,
  id: string,
): Promise<WebhookWithSecret> {
  const { tenantId } = context.viewer;
  const keyring = usableKeyring(keys);
  const secret = newWebhookSecret();
  const sealed = sealWebhookSecret(keyring, tenantId, id, secret);
  const webhook = await context.prisma.$transaction(async (tx) => {
    const [current] = await tx.$queryRaw<{ key_id: string; sealed_secret: Uint8Array<ArrayBuffer> }[]>`
      SELECT key_id, sealed_secret FROM webhooks WHERE id = ${id}::uuid AND tenant_id = ${tenantId}::uuid FOR UPDATE`;
    if (!current) throw webhookNotFound(id);
    const now = new Date();
    const rotated = await tx.webhook.update({
      where: { id },
      data: {
        keyId: sealed.keyId,
        sealedSecret: sealed.sealed,
        previousKeyId: current.key_id,
        previousSecret: current.sealed_secret,
        previousExpiresAt: new Date(now.getTime() + ROTATION_OVERLAP_MS),
        secretRotatedAt: now,
      },
    });
    await recordAudit(tx, context, {
      action: 'webhook.secret.rotated',
      targetType: 'webhook',
      targetId: id,
      outcome: 'rotated',
      details: { previous_valid_until: rotated.previousExpiresAt?.toISOString() },
    });
    return rotated;
  });
  return { webhook, secret };
}

/**
 * Turns a webhook on or off. Enabling a disabled webhook clears its failure record; deliveries queued
 * from then on are sent (those failed when it was disabled can be redelivered one by one).
 */
export async function setWebhookEnabled(context: Actor, id: string, enabled: boolean): Promise<Webhook> {
  const { tenantId } = context.viewer;
  return context.prisma.$transaction(async (tx) => {
    const existing = await tx.webhook.findFirst({ where: { id, tenantId } });
    if (!existing) throw webhookNotFound(id);
    const status = enabled ? 'active' : 'disabled';
    if (existing.status === status) return existing;
    const webhook = await tx.webhook.update({
      where: { id },
      data: enabled
        ? { status, failingSince: null, disabledAt: null, disabledReason: null }
        : { status, disabledAt: new Date(), disabledReason: 'disabled by a user' },
    });
    await recordAudit(tx, context, {
      action: enabled ? 'webhook.enabled' : 'webhook.disabled',
      targetType: 'webhook',
      targetId: id,
      outcome: status,
    });
    return webhook;
  });
}

/**
 * Queues the delivery's message again, with the same `webhook-id` (so a receiver that already handled it
 * can tell), after whatever the webhook has pending. The webhook must be active, and the tenant's queue
 * below `queuePerTenant` (counted under the relay's lock, as the relay counts it when it queues).
 */
export async function redeliverWebhookDelivery(
  context: Actor,
  id: string,
  queuePerTenant: number,
): Promise<WebhookDelivery> {
  const { tenantId } = context.viewer;
  return context.prisma.$transaction(async (tx) => {
    const original = await tx.webhookDelivery.findFirst({
      where: { id, tenantId },
      include: { webhook: true },
    });
    if (!original) throw deliveryNotFound(id);
    if (original.webhook.status !== 'active') {
      throw conflict(`Webhook ${original.webhookId} is disabled: enable it before redelivering`);
    }
    await tx.$executeRawUnsafe(`SELECT pg_advisory_xact_lock(${RELAY_LOCK_SQL})`);
    const pending = await tx.webhookDelivery.count({
      where: { tenantId, status: 'pending' },
      take: queuePerTenant,
    });
    if (pending >= queuePerTenant) {
      throw conflict(
        `Webhook deliveries of this tenant are at their limit (${queuePerTenant} pending): redeliver once they are sent`,
      );
    }
    const redelivery = await tx.webhookDelivery.create({
      data: {
        id: randomUUID(),
        tenantId,
        webhookId: original.webhookId,
        messageId: original.messageId,
        eventId: original.eventId,
        eventType: original.eventType,
        body: original.body,
        redeliveryOf: original.id,
      },
    });
    await recordAudit(tx, context, {
      action: 'webhook.delivery.redelivered',
      targetType: 'webhook_delivery',
      targetId: original.id,
      outcome: 'queued',
      details: { redelivery_id: redelivery.id, webhook_id: original.webhookId },
    });
    return redelivery;
  });
}

/** How many webhooks sign with a secret no configured key opens (their deliveries fail until fixed). */
export function webhooksUnderMissingKeys(prisma: PrismaClient, keyring: Keyring): Promise<number> {
  const keyIds = keyring.map((key) => key.id);
  return prisma.webhook.count({
    where: {
      OR: [
        { keyId: { notIn: keyIds } },
        { previousKeyId: { notIn: keyIds }, previousExpiresAt: { gt: new Date() } },
      ],
    },
  });
}
