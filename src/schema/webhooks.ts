import { z } from 'zod';
import { type AuthedContext, builder } from '../builder.js';
import { normalizeRole } from '../domain/agents/roles.js';
import { checkBaseUrl } from '../domain/connectors/base-url.js';
import { ROTATION_OVERLAP_MS } from '../domain/webhooks/signing.js';
import {
  createTaskWebhook,
  createWebhook,
  deleteTaskWebhook,
  deliveryNotFound,
  redeliverWebhookDelivery,
  rotateWebhookSecret,
  setWebhookEnabled,
  taskWebhookScope,
  type WebhookWithSecret,
  webhookNotFound,
} from '../domain/webhooks/store.js';
import { graphqlArg, idArg, zodField, zodInputType } from './args.js';
import { afterCursor, newestFirst, pageArgsSchema, pageType, toPage } from './pagination.js';

const WEBHOOK_STATUSES = ['active', 'disabled'] as const;
const DELIVERY_STATUSES = ['pending', 'delivered', 'failed', 'dropped'] as const;

const WebhookStatus = builder.enumType('WebhookStatus', { values: WEBHOOK_STATUSES });
const WebhookDeliveryStatus = builder.enumType('WebhookDeliveryStatus', {
  description:
    'pending until the receiver answers 2xx (delivered) or its webhook is disabled (failed); dropped: never queued or sent, because the tenant already had as many deliveries pending as it may (redeliver it once they are sent).',
  values: DELIVERY_STATUSES,
});

type WebhookStatusValue = (typeof WEBHOOK_STATUSES)[number];
type DeliveryStatusValue = (typeof DELIVERY_STATUSES)[number];

export const WebhookRef = builder.prismaObject('Webhook', {
  description:
    'A URL the tenant’s events are POSTed to, signed (Standard Webhooks). The secret is never shown here.',
  fields: (t) => ({
    id: t.exposeID('id'),
    role: t.exposeString('role', {
      nullable: true,
      description: 'The agent role whose events it receives; null: every event of the tenant.',
    }),
    taskId: t.exposeID('taskId', {
      nullable: true,
      description:
        'The task whose status updates alone it receives (an A2A push notification config); null for a role’s or the tenant’s webhook.',
    }),
    notificationToken: t.exposeString('notificationToken', {
      nullable: true,
      description: 'A task webhook’s client token, sent with each delivery as X-A2A-Notification-Token.',
    }),
    url: t.exposeString('url'),
    status: t.field({ type: WebhookStatus, resolve: (webhook) => webhook.status as WebhookStatusValue }),
    createdAt: t.expose('createdAt', { type: 'DateTime' }),
    secretRotatedAt: t.expose('secretRotatedAt', { type: 'DateTime', nullable: true }),
    previousSecretValidUntil: t.expose('previousExpiresAt', {
      type: 'DateTime',
      nullable: true,
      description: 'Until when deliveries are also signed with the secret before the last rotation.',
    }),
    failingSince: t.expose('failingSince', {
      type: 'DateTime',
      nullable: true,
      description: 'First failed attempt since the last success; null while deliveries succeed.',
    }),
    disabledAt: t.expose('disabledAt', { type: 'DateTime', nullable: true }),
    disabledReason: t.exposeString('disabledReason', { nullable: true }),
  }),
});

const WebhookDeliveryRef = builder.prismaObject('WebhookDelivery', {
  description: 'One message for one webhook and how sending it went.',
  fields: (t) => ({
    id: t.exposeID('id'),
    webhookId: t.exposeID('webhookId'),
    messageId: t.exposeID('messageId', {
      description: 'The webhook-id header: the same for every attempt and redelivery (de-duplicate on it).',
    }),
    eventId: t.exposeID('eventId'),
    eventType: t.exposeString('eventType'),
    payload: t.field({
      type: 'JSON',
      description: 'The body sent.',
      resolve: (delivery) => JSON.parse(delivery.body),
    }),
    status: t.field({
      type: WebhookDeliveryStatus,
      resolve: (delivery) => delivery.status as DeliveryStatusValue,
    }),
    attempts: t.exposeInt('attempts'),
    createdAt: t.expose('createdAt', { type: 'DateTime' }),
    nextAttemptAt: t.field({
      type: 'DateTime',
      nullable: true,
      description: 'When a pending delivery is tried next; null once settled.',
      resolve: (delivery) => (delivery.status === 'pending' ? delivery.nextAttemptAt : null),
    }),
    lastAttemptAt: t.expose('lastAttemptAt', { type: 'DateTime', nullable: true }),
    lastStatusCode: t.exposeInt('lastStatusCode', { nullable: true }),
    lastError: t.exposeString('lastError', { nullable: true }),
    lastDurationMs: t.exposeInt('lastDurationMs', { nullable: true }),
    deliveredAt: t.expose('deliveredAt', { type: 'DateTime', nullable: true }),
    latencyMs: t.exposeInt('latencyMs', {
      nullable: true,
      description: 'From the event being recorded to the receiver’s 2xx.',
    }),
    redeliveryOf: t.exposeID('redeliveryOf', { nullable: true }),
  }),
});

const WebhookDeliveryPage = pageType('WebhookDelivery', WebhookDeliveryRef);

const WebhookWithSecretRef = builder.objectRef<WebhookWithSecret>('WebhookWithSecret').implement({
  description: 'A webhook and its signing secret: answered once, when the secret is created or rotated.',
  fields: (t) => ({
    webhook: t.field({ type: WebhookRef, resolve: (result) => result.webhook }),
    secret: t.exposeString('secret', {
      description: 'whsec_ and the base64 key (Standard Webhooks). Store it now: it is never shown again.',
    }),
  }),
});

const webhookUrl = z.string().superRefine((value, ctx) => {
  const reason = checkBaseUrl(value, 'url');
  if (reason !== null) ctx.addIssue({ code: 'custom', message: reason, input: value });
});

const createWebhookInput = z.object({
  url: graphqlArg(webhookUrl, {
    description: 'Absolute https URL of a public host, checked like a connector’s base_url.',
  }),
  role: graphqlArg(
    z
      .string()
      .min(1)
      .max(64)
      .nullish()
      .transform((role) => role ?? null),
    { description: 'An agent role of the tenant; omit for every event of the tenant.' },
  ),
});
zodInputType('CreateWebhookInput', createWebhookInput);

const createWebhookArgs = z.object({ input: createWebhookInput });
const idArgs = z.object({ id: idArg() });

const managers = { operator: true, chairman: true } as const;

function wakeDispatcher<T>(context: AuthedContext, result: T): T {
  context.services.webhooks.kick();
  return result;
}

builder.queryField('webhooks', (t) =>
  t.withAuth(managers).prismaField({
    type: [WebhookRef],
    description: 'The tenant’s webhooks, newest first (operator or chairman).',
    resolve: (query, _root, _args, context) =>
      context.prisma.webhook.findMany({
        ...query,
        where: { tenantId: context.viewer.tenantId },
        orderBy: newestFirst,
      }),
  }),
);

builder.queryField('webhook', (t) =>
  t.withAuth(managers).field({
    type: WebhookRef,
    description: 'One webhook of the tenant (NOT_FOUND otherwise; operator or chairman).',
    ...zodField(t, idArgs, async (_root, { id }, context) => {
      const webhook = await context.prisma.webhook.findFirst({
        where: { id, tenantId: context.viewer.tenantId },
      });
      if (!webhook) throw webhookNotFound(id);
      return webhook;
    }),
  }),
);

const deliveriesArgs = z.object({
  webhookId: idArg(),
  status: graphqlArg(z.enum(DELIVERY_STATUSES), { type: WebhookDeliveryStatus }).nullish(),
  ...pageArgsSchema,
});

builder.queryField('webhookDeliveries', (t) =>
  t.withAuth(managers).field({
    type: WebhookDeliveryPage,
    description: 'A webhook’s deliveries, newest first, optionally of one status (operator or chairman).',
    ...zodField(t, deliveriesArgs, async (_root, { webhookId, status, first, after }, context) => {
      const tenantId = context.viewer.tenantId;
      const webhook = await context.prisma.webhook.findFirst({
        where: { id: webhookId, tenantId },
        select: { id: true },
      });
      if (!webhook) throw webhookNotFound(webhookId);
      const rows = await context.prisma.webhookDelivery.findMany({
        where: { tenantId, webhookId, ...(status ? { status } : {}), ...afterCursor(after) },
        orderBy: newestFirst,
        take: first + 1,
      });
      return toPage(rows, first);
    }),
  }),
);

builder.queryField('webhookDelivery', (t) =>
  t.withAuth(managers).field({
    type: WebhookDeliveryRef,
    description: 'One delivery of the tenant’s webhooks (NOT_FOUND otherwise; operator or chairman).',
    ...zodField(t, idArgs, async (_root, { id }, context) => {
      const delivery = await context.prisma.webhookDelivery.findFirst({
        where: { id, tenantId: context.viewer.tenantId },
      });
      if (!delivery) throw deliveryNotFound(id);
      return delivery;
    }),
  }),
);

builder.mutationField('createWebhook', (t) =>
  t.withAuth(managers).field({
    type: WebhookWithSecretRef,
    description:
      'Registers a URL for one agent role’s events (or, without a role, every event of the tenant) and answers its signing secret, once. The URL is refused with the reason when the egress guard would refuse it. Needs CONNECTOR_SECRETS_KEY. Operator or chairman.',
    ...zodField(t, createWebhookArgs, (_root, { input }, context) =>
      createWebhook(
        context,
        { keyring: context.services.config.connectorSecretsKeys, egress: context.services.webhookEgress },
        input,
      ),
    ),
  }),
);

builder.mutationField('rotateWebhookSecret', (t) =>
  t.withAuth(managers).field({
    type: WebhookWithSecretRef,
    description: `Replaces the signing secret and answers the new one, once; the previous one keeps signing beside it for ${ROTATION_OVERLAP_MS / 3_600_000} h. Operator or chairman.`,
    ...zodField(t, idArgs, (_root, { id }, context) =>
      rotateWebhookSecret(context, context.services.config.connectorSecretsKeys, id),
    ),
  }),
);

builder.mutationField('enableWebhook', (t) =>
  t.withAuth(managers).field({
    type: WebhookRef,
    description: 'Turns a webhook back on and clears its failure record (operator or chairman).',
    ...zodField(t, idArgs, async (_root, { id }, context) =>
      wakeDispatcher(context, await setWebhookEnabled(context, id, true)),
    ),
  }),
);

builder.mutationField('disableWebhook', (t) =>
  t.withAuth(managers).field({
    type: WebhookRef,
    description:
      'Stops deliveries to a webhook; queued ones wait until it is enabled (operator or chairman).',
    ...zodField(t, idArgs, (_root, { id }, context) => setWebhookEnabled(context, id, false)),
  }),
);

builder.mutationField('redeliverWebhookDelivery', (t) =>
  t.withAuth(managers).field({
    type: WebhookDeliveryRef,
    description:
      'Queues a delivery’s message again (same webhook-id), after what its webhook has pending; answers the new delivery. Operator or chairman.',
    ...zodField(t, idArgs, async (_root, { id }, context) =>
      wakeDispatcher(
        context,
        await redeliverWebhookDelivery(context, id, context.services.config.webhooks.queuePerTenant),
      ),
    ),
  }),
);

const taskRoleArg = graphqlArg(
  z
    .string()
    .min(1)
    .max(64)
    .nullish()
    .transform((role) => (role ? normalizeRole(role) : null)),
  { description: 'Only when the task is of this agent role (NOT_FOUND otherwise).' },
);

const createTaskWebhookInput = z.object({
  taskId: idArg(),
  role: taskRoleArg,
  url: graphqlArg(webhookUrl, {
    description: 'Absolute https URL of a public host, checked as every webhook’s.',
  }),
  token: graphqlArg(
    z
      .string()
      .min(1)
      .max(1024)
      .nullish()
      .transform((token) => token ?? null),
    { description: 'Sent back with each delivery as X-A2A-Notification-Token (A2A’s `token`).' },
  ),
});
zodInputType('CreateTaskWebhookInput', createTaskWebhookInput);

const taskWebhooksArgs = z.object({ taskId: idArg(), role: taskRoleArg });
const taskWebhookArgs = z.object({ taskId: idArg(), id: idArg(), role: taskRoleArg });

// Task webhooks follow the task: whoever may read the task (and so send it work over A2A) may follow it.
const taskReaders = { authenticated: true } as const;

builder.queryField('taskWebhooks', (t) =>
  t.withAuth(taskReaders).field({
    type: [WebhookRef],
    description:
      'The webhooks of a task the caller may read (its A2A push notification configs), oldest first; none for another’s task.',
    ...zodField(t, taskWebhooksArgs, (_root, { taskId, role }, context) =>
      context.prisma.webhook.findMany({
        where: taskWebhookScope(context, taskId, role),
        orderBy: [{ createdAt: 'asc' }, { id: 'asc' }],
      }),
    ),
  }),
);

builder.queryField('taskWebhook', (t) =>
  t.withAuth(taskReaders).field({
    type: WebhookRef,
    description: 'One webhook of a task the caller may read (NOT_FOUND otherwise).',
    ...zodField(t, taskWebhookArgs, async (_root, { taskId, id, role }, context) => {
      const webhook = await context.prisma.webhook.findFirst({
        where: { id, ...taskWebhookScope(context, taskId, role) },
      });
      if (!webhook) throw webhookNotFound(id);
      return webhook;
    }),
  }),
);

builder.mutationField('createTaskWebhook', (t) =>
  t.withAuth(taskReaders).field({
    type: WebhookWithSecretRef,
    description:
      'Registers a URL for one task’s status updates (an A2A push notification config), of a task the caller may read (NOT_FOUND otherwise), and answers its signing secret, once. The URL is judged as every webhook’s. Needs CONNECTOR_SECRETS_KEY.',
    ...zodField(t, z.object({ input: createTaskWebhookInput }), (_root, { input }, context) =>
      createTaskWebhook(
        context,
        { keyring: context.services.config.connectorSecretsKeys, egress: context.services.webhookEgress },
        input,
      ),
    ),
  }),
);

builder.mutationField('deleteTaskWebhook', (t) =>
  t.withAuth(taskReaders).field({
    type: WebhookRef,
    description:
      'Deletes a task’s webhook with its pending deliveries (none is sent after); answers it as it was.',
    ...zodField(t, taskWebhookArgs, (_root, input, context) => deleteTaskWebhook(context, input)),
  }),
);

/** What WEBHOOK_DISABLED carries: ids and times, never the URL or the failure's text. */
interface WebhookDisabledPayload {
  event_id: string;
  tenant_id: string;
  webhook_id: string;
  role: string | null;
  failing_since: string;
  disabled_at: string;
}

export const WebhookDisabledEvent = builder
  .objectRef<WebhookDisabledPayload>('WebhookDisabledEvent')
  .implement({
    description: 'A webhook was disabled after its deliveries kept failing.',
    fields: (t) => ({
      eventId: t.exposeID('event_id'),
      tenantId: t.exposeID('tenant_id'),
      webhookId: t.exposeID('webhook_id'),
      // Not `role`: a nullable `role` beside the other events' non-null ones would make one selection of
      // `role` across the TenantEvent union invalid (conflicting types).
      webhookRole: t.exposeString('role', {
        nullable: true,
        description: 'The agent role the webhook was for; null for a tenant-wide webhook.',
      }),
      failingSince: t.field({ type: 'DateTime', resolve: (event) => event.failing_since }),
      disabledAt: t.field({ type: 'DateTime', resolve: (event) => event.disabled_at }),
    }),
  });
