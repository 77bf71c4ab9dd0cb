import { z } from 'zod';
import { type AuthedContext, builder } from '../../builder.js';
import {
  type CallDecision,
  decideCallApproval,
  findCallApproval,
  openedInput,
  openedResponse,
  readsAllApprovals,
} from '../../domain/connectors/call-approvals.js';
import {
  CALL_APPROVAL_STATUSES,
  type CallApprovalStatus,
  effectiveStatus,
} from '../../domain/connectors/call-approvals-store.js';
import type { ConnectorCallApproval } from '../../generated/prisma/client.js';
import { leavingAdmission } from '../admission.js';
import { graphqlArg, idArg, zodField, zodSubscription } from '../args.js';
import { afterArg, eventStream } from '../event-stream.js';
import { afterCursor, newestFirst, pageArgsSchema, pageType, toPage } from '../pagination.js';

const ApprovalStatus = builder.enumType('ConnectorCallApprovalStatus', {
  description:
    'pending: waiting for a decision; approved: the call was made once (see `call`); rejected; ' +
    'changes_requested: sent back to the requester, who may call again; expired: nobody decided in time; ' +
    'cancelled: the connector changed (another origin, an edit, a policy change) before the call was made, so it was not made.',
  values: CALL_APPROVAL_STATUSES,
});

export interface ApprovedCall {
  outcome: string;
  status: number | null;
  bytes: number | null;
  durationMs: number | null;
  executedAt: Date | null;
  failure: string | null;
  response: Record<string, unknown> | null;
}

const ApprovedCallRef = builder.objectRef<ApprovedCall>('ConnectorApprovedCall').implement({
  description: 'The call made on approval, kept for the requester (its response sealed at rest).',
  fields: (t) => ({
    outcome: t.exposeString('outcome', {
      description:
        'success, upstream_error (status ≥ 400), or why it was not made or failed (egress refusal, timeout, rate limit, an input the template no longer accepts).',
    }),
    status: t.exposeInt('status', { nullable: true, description: 'The server’s HTTP status.' }),
    bytes: t.exposeInt('bytes', { nullable: true }),
    durationMs: t.exposeInt('durationMs', { nullable: true }),
    executedAt: t.expose('executedAt', { type: 'DateTime', nullable: true }),
    failure: t.exposeString('failure', { nullable: true, description: 'Why the call failed, when it did.' }),
    headers: t.field({ type: 'JSON', nullable: true, resolve: (call) => call.response?.headers ?? null }),
    body: t.field({
      type: 'JSON',
      nullable: true,
      description: 'The body as JSON when it parses, else its text; null when empty. At most 1 MiB.',
      resolve: (call) => call.response?.body ?? null,
    }),
  }),
});

export const ConnectorCallApprovalRef = builder
  .objectRef<ConnectorCallApproval>('ConnectorCallApproval')
  .implement({
    description:
      'A call of a gated endpoint, kept for a decision: nothing is sent before it is approved, and then once.',
    fields: (t) => ({
      id: t.exposeID('id'),
      connectorId: t.exposeID('connectorId'),
      connectorVersion: t.exposeInt('connectorVersion', {
        description:
          'The connector version (template and policy) the request was checked against; its call is made only on this version.',
      }),
      method: t.exposeString('method'),
      path: t.exposeString('path'),
      status: t.field({ type: ApprovalStatus, resolve: (row) => effectiveStatus(row) }),
      approverRoles: t.exposeStringList('approverRoles', { description: 'Roles that may decide.' }),
      requestedBy: t.exposeString('requestedBy'),
      expiresAt: t.expose('expiresAt', { type: 'DateTime' }),
      decidedBy: t.exposeString('decidedBy', { nullable: true }),
      decidedAt: t.expose('decidedAt', { type: 'DateTime', nullable: true }),
      note: t.exposeString('note', { nullable: true }),
      reason: t.exposeString('reason', {
        nullable: true,
        description:
          'Why it ended without a decision (expired, origin_changed, connector_changed), or why its call failed.',
      }),
      input: t.field({
        type: 'JSON',
        description: 'What the requester asked to send: query, body and headers (sealed at rest).',
        resolve: (row, _args, context) => openedInput(context.services.config.connectorSecretsKeys, row),
      }),
      call: t.field({
        type: ApprovedCallRef,
        nullable: true,
        description: 'The call made on approval; null until it is made (and for every other status).',
        resolve: (row, _args, context) =>
          row.outcome === null || row.outcome === 'not_sent'
            ? null
            : {
                outcome: row.outcome,
                status: row.responseStatus,
                bytes: row.responseBytes,
                durationMs: row.durationMs,
                executedAt: row.executedAt,
                failure: row.responseStatus === null ? row.reason : null,
                response: openedResponse(context.services.config.connectorSecretsKeys, row),
              },
      }),
      createdAt: t.expose('createdAt', { type: 'DateTime' }),
      updatedAt: t.expose('updatedAt', { type: 'DateTime' }),
    }),
  });

const ApprovalPage = pageType('ConnectorCallApproval', ConnectorCallApprovalRef);
const approvalId = idArg();
const note = graphqlArg(z.string().max(2000).nullish(), { description: 'At most 2000 characters.' });

const listArgs = z.object({
  ...pageArgsSchema,
  status: graphqlArg(z.enum(CALL_APPROVAL_STATUSES), { type: ApprovalStatus }).nullish(),
  connectorId: idArg().nullish(),
});

/** Prisma `where` of the status a reader sees (a pending request past its expiry reads as expired). */
function statusWhere(status: CallApprovalStatus | null | undefined, now: Date) {
  if (!status) return {};
  if (status === 'pending') return { status, expiresAt: { gt: now } };
  if (status === 'expired') {
    return { OR: [{ status: 'expired' }, { status: 'pending', expiresAt: { lte: now } }] };
  }
  return { status };
}

builder.queryField('connectorCallApprovals', (t) =>
  t.withAuth({ chairman: true, operator: true, agent: true }).field({
    type: ApprovalPage,
    description:
      'The approval inbox: gated connector calls of the tenant, newest first (an agent sees only its own; members nothing, FORBIDDEN).',
    ...zodField(t, listArgs, async (_root, { status, connectorId, first, after }, context) => {
      const { viewer } = context;
      const rows = await context.prisma.connectorCallApproval.findMany({
        where: {
          AND: [
            { tenantId: viewer.tenantId },
            readsAllApprovals(viewer) ? {} : { requestedBy: viewer.sub },
            connectorId ? { connectorId } : {},
            statusWhere(status, new Date()),
            afterCursor(after),
          ],
        },
        orderBy: newestFirst,
        take: first + 1,
      });
      return toPage(rows, first);
    }),
  }),
);

builder.queryField('connectorCallApproval', (t) =>
  t.withAuth({ chairman: true, operator: true, agent: true }).field({
    type: ConnectorCallApprovalRef,
    description: 'One gated call (NOT_FOUND for another tenant’s, and for an agent another requester’s).',
    ...zodField(t, z.object({ id: approvalId }), (_root, { id }, context) => findCallApproval(context, id)),
  }),
);

const decideArgs = z.object({ id: approvalId, note });

const decisions: [string, CallDecision, string][] = [
  [
    'approveConnectorCall',
    'approve',
    'Approves a waiting call and makes it, exactly once even when approvers decide at once; the result is kept on the approval.',
  ],
  ['rejectConnectorCall', 'reject', 'Rejects a waiting call; nothing is sent.'],
  [
    'requestConnectorCallChanges',
    'request_changes',
    'Sends a waiting call back to its requester (say what to change in `note`); nothing is sent.',
  ],
];

for (const [name, decision, description] of decisions) {
  builder.mutationField(name, (t) =>
    t.withAuth({ chairman: true, operator: true }).field({
      type: ConnectorCallApprovalRef,
      description: `${description} Only a role of its approverRoles decides (FORBIDDEN otherwise), never whoever asked (FORBIDDEN, reason own_request, whatever roles the token carries). A request already decided answers its first decision unchanged; an expired or cancelled one is CONFLICT with its status.`,
      ...zodField(t, decideArgs, (_root, { id, note: text }, context) =>
        decideCallApproval(
          context,
          context.services,
          { id, decision, note: text },
          leavingAdmission(context),
        ),
      ),
    }),
  );
}

export interface ApprovalEventPayload {
  event_id: string;
  tenant_id: string;
  type: string;
  approval_id: string;
  connector_id: string;
  method: string;
  path: string;
  status: CallApprovalStatus;
  requested_by: string;
  decided_by: string | null;
  reason: string | null;
  expires_at: string;
  changed_at: string;
}

export const ConnectorCallApprovalEvent = builder
  .objectRef<ApprovalEventPayload>('ConnectorCallApprovalEvent')
  .implement({
    description: 'A gated call was requested or decided (never its input, note or response).',
    fields: (t) => ({
      eventId: t.exposeID('event_id'),
      tenantId: t.exposeID('tenant_id'),
      approvalId: t.exposeID('approval_id'),
      connectorId: t.exposeID('connector_id'),
      method: t.exposeString('method'),
      path: t.exposeString('path'),
      status: t.field({ type: ApprovalStatus, resolve: (event) => event.status }),
      requestedBy: t.exposeString('requested_by'),
      decidedBy: t.exposeString('decided_by', { nullable: true }),
      reason: t.exposeString('reason', { nullable: true }),
      expiresAt: t.field({ type: 'DateTime', resolve: (event) => event.expires_at }),
      changedAt: t.field({ type: 'DateTime', resolve: (event) => event.changed_at }),
    }),
  });

export const APPROVAL_EVENT_TYPES = [
  'CONNECTOR_CALL_APPROVAL_REQUESTED',
  'CONNECTOR_CALL_APPROVAL_DECIDED',
] as const;

/** Whether the viewer may see an approval event: approvers all of the tenant's, an agent its own. */
export function seesApprovalEvent(
  viewer: AuthedContext['viewer'],
  payload: Record<string, unknown>,
): boolean {
  if (readsAllApprovals(viewer)) return true;
  return viewer.roles.includes('agent') && payload.requested_by === viewer.sub;
}

const subscriptionArgs = z.object({ connectorId: idArg().nullish(), after: afterArg });

builder.subscriptionField('connectorCallApprovalChanged', (t) =>
  t.withAuth({ chairman: true, operator: true, agent: true }).field({
    type: ConnectorCallApprovalEvent,
    description:
      'New and decided gated calls of the subscriber’s tenant, optionally of one connector (an agent gets only its own).',
    ...zodSubscription(t, subscriptionArgs, (_root, { connectorId, after }, context: AuthedContext) => {
      return eventStream(
        context,
        APPROVAL_EVENT_TYPES,
        after,
        (event) =>
          seesApprovalEvent(context.viewer, event.payload) &&
          (!connectorId || event.payload.connector_id === connectorId),
      );
    }),
    resolve: (event) => event.payload as unknown as ApprovalEventPayload,
  }),
);
