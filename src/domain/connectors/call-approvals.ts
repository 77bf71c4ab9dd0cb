import { recordAudit } from '../../audit.js';
import { enqueueEvent } from '../../events/outbox.js';
import type { Connector, ConnectorCallApproval } from '../../generated/prisma/client.js';
import type { Actor } from '../actor.js';
import { recordSteps } from '../agents/task-steps.js';
import { DomainError, forbidden, notFound, ownRequest, Refusal } from '../errors.js';
import { originOf } from './base-url.js';
import {
  approvalPayload,
  type CallApprovalStatus,
  effectiveStatus,
  expireCallApprovals,
  openPart,
  sealPart,
} from './call-approvals-store.js';
import { type CallOptions, type ConnectorCallServices, callEndpoint } from './invoke.js';
import type { EndpointRef, InvocationInput } from './invoke-request.js';
import type { Keyring } from './sealing.js';
import type { StoredConnectorTemplate } from './template.js';

export type CallDecision = 'approve' | 'reject' | 'request_changes';

const STATUS_OF: Record<CallDecision, CallApprovalStatus> = {
  approve: 'approved',
  reject: 'rejected',
  request_changes: 'changes_requested',
};

const approvalNotFound = (id: string) => notFound(`Approval ${id} not found`);

/** Whether the viewer reads every request of the tenant (approvers) or only its own (an agent). */
export function readsAllApprovals(viewer: Actor['viewer']): boolean {
  return viewer.roles.includes('chairman') || viewer.roles.includes('operator');
}

/** One request the viewer may read: the tenant's for an approver, its own for an agent; 404 otherwise. */
export async function findCallApproval(context: Actor, id: string): Promise<ConnectorCallApproval> {
  const row = await context.prisma.connectorCallApproval.findFirst({
    where: {
      id,
      tenantId: context.viewer.tenantId,
      ...(readsAllApprovals(context.viewer) ? {} : { requestedBy: context.viewer.sub }),
    },
  });
  if (!row) throw approvalNotFound(id);
  return row;
}

export interface DecideCommand {
  id: string;
  decision: CallDecision;
  note?: string | null | undefined;
}

/** A request that ended without a decision (expired, or its connector moved): 409 with its state. */
function ended(row: ConnectorCallApproval, status: CallApprovalStatus) {
  const why =
    status === 'expired'
      ? `expired at ${row.expiresAt.toISOString()}`
      : `was cancelled (${row.reason ?? 'ended'})`;
  return new Refusal('CONFLICT', `Approval ${row.id} ${why}; its status is ${status}`, {
    reason: `approval_${status}`,
    facts: { status },
  });
}

/**
 * Decides a waiting request. The decision is taken by one conditional UPDATE (status still `pending`,
 * not expired), so of two approvers deciding at once, on one instance or two, exactly one wins and only
 * the winner of an approval makes the call. A request already decided answers that first decision
 * unchanged; an expired or cancelled one is 409 with its state. Only a role the policy names may decide
 * (FORBIDDEN otherwise), and never whoever asked (FORBIDDEN `own_request`, whatever roles their token has).
 */
export async function decideCallApproval(
  context: Actor,
  services: ConnectorCallServices,
  command: DecideCommand,
  options: CallOptions = {},
): Promise<ConnectorCallApproval> {
  const { viewer } = context;
  const row = await context.prisma.connectorCallApproval.findFirst({
    where: { id: command.id, tenantId: viewer.tenantId },
  });
  if (!row) throw approvalNotFound(command.id);
  if (!row.approverRoles.some((role) => viewer.roles.includes(role as never))) {
    throw forbidden(`Only the ${row.approverRoles.join(' or ')} may decide approval ${row.id}`);
  }
  if (row.requestedBy === viewer.sub) throw ownRequest(`Approval ${row.id}`, viewer.sub);
  const status = STATUS_OF[command.decision];
  const note = command.note ?? null;
  const claimed = await context.prisma.$transaction(async (tx) => {
    const [won] = await tx.$queryRaw<{ id: string }[]>`
      UPDATE connector_call_approvals
      SET status = ${status}, decided_by = ${viewer.sub}, decided_at = now(), note = ${note}, updated_at = now()
      WHERE id = ${row.id}::uuid AND tenant_id = ${viewer.tenantId}::uuid
        AND status = 'pending' AND expires_at > now()
      RETURNING id::text`;
    if (!won) return null;
    const decided = await tx.connectorCallApproval.findUniqueOrThrow({ where: { id: row.id } });
    await recordAudit(tx, context, {
      action: `connector.call.${command.decision}`,
      targetType: 'connector_call_approval',
      targetId: row.id,
      outcome: status,
      details: { connector_id: row.connectorId, method: row.method, path: row.path, note },
    });
    if (decided.taskId) {
      await recordSteps(tx, row.tenantId, decided.taskId, [
        {
          kind: 'approval_decided',
          actor: viewer.sub,
          approval_id: row.id,
          connector_id: row.connectorId,
          endpoint: `${row.method.toUpperCase()} ${row.path}`,
          outcome: status,
          reason: note,
        },
      ]);
    }
    await enqueueEvent(tx, {
      type: 'CONNECTOR_CALL_APPROVAL_DECIDED',
      tenantId: row.tenantId,
      payload: approvalPayload(decided),
    });
    return decided;
  });
  if (!claimed) {
    // Someone else decided first, or the request is over: answer what it is now.
    await expireCallApprovals(context.prisma, { id: row.id });
    const current = await context.prisma.connectorCallApproval.findUniqueOrThrow({ where: { id: row.id } });
    const now = effectiveStatus(current);
    if (now === 'expired' || now === 'cancelled') throw ended(current, now);
    return current;
  }
  if (status !== 'approved') return claimed;
  return execute(context, services, claimed, options);
}

/** The outcome name of a refused or failed call: its reason, else its code in lower case. */
function failureOf(error: unknown): { outcome: string; message: string } | null {
  if (!(error instanceof DomainError)) return null;
  return { outcome: error.reason ?? error.code.toLowerCase(), message: error.message };
}

/**
 * Why an approved request can no longer be made as it was requested, or null: its connector moved to
 * another origin (or is gone), or to any other version than the one the request was checked against (a
 * template edit, a policy change). The call runs only on the version that was approved.
 */
function changeOf(row: ConnectorCallApproval, connector: Connector | null): string | null {
  if (!connector) return 'origin_changed';
  const template = connector.template as unknown as StoredConnectorTemplate;
  if (originOf(template.base_url) !== row.origin) return 'origin_changed';
  if (connector.version !== row.connectorVersion) return 'connector_changed';
  return null;
}

/** Ends an approved request whose connector changed before its call was made: audited, announced, 409. */
async function cancelApproved(context: Actor, row: ConnectorCallApproval, reason: string): Promise<never> {
  const cancelled = await context.prisma.$transaction(async (tx) => {
    const changed = await tx.connectorCallApproval.update({
      where: { id: row.id },
      data: { status: 'cancelled', reason, outcome: 'not_sent' },
    });
    await recordAudit(tx, context, {
      action: 'connector.call.cancel',
      targetType: 'connector_call_approval',
      targetId: row.id,
      outcome: 'cancelled',
      details: { connector_id: row.connectorId, connector_version: row.connectorVersion, reason },
    });
    await enqueueEvent(tx, {
      type: 'CONNECTOR_CALL_APPROVAL_DECIDED',
      tenantId: row.tenantId,
      payload: approvalPayload(changed),
    });
    return changed;
  });
  throw ended(cancelled, 'cancelled');
}

/**
 * Makes the approved call, once (the caller won the claim), and keeps its result for the requester: its
 * status, size and duration, and the response (headers and body under the usual cap) sealed. The call is
 * made with the connector as read here, which must be the version the request was checked against: a
 * connector that changed since (an edit committed after the claim) cancels the request instead (409). A
 * call that cannot be made (the connector was disabled, its rate limits are spent, the upstream failed)
 * records why.
 */
async function execute(
  context: Actor,
  services: ConnectorCallServices,
  row: ConnectorCallApproval,
  options: CallOptions,
): Promise<ConnectorCallApproval> {
  const keyring = services.config.connectorSecretsKeys;
  const connector = await context.prisma.connector.findFirst({
    where: { id: row.connectorId, tenantId: row.tenantId },
  });
  const change = changeOf(row, connector);
  if (change !== null || connector === null) return cancelApproved(context, row, change ?? 'origin_changed');
  const input = openPart(keyring, row, 'input', {
    keyId: row.keyId,
    sealed: row.sealedInput,
  }) as InvocationInput;
  const started = new Date();
  try {
    const invocation = await callEndpoint(
      context,
      services,
      connector,
      { method: row.method, path: row.path } as EndpointRef,
      input,
      options,
    );
    const sealed = sealPart(keyring, row, 'response', {
      headers: invocation.headers,
      body: invocation.body,
      redirects: invocation.redirects,
      responseValidation: invocation.responseValidation,
    });
    return await context.prisma.connectorCallApproval.update({
      where: { id: row.id },
      data: {
        outcome: invocation.status < 400 ? 'success' : 'upstream_error',
        responseStatus: invocation.status,
        responseBytes: invocation.bytes,
        durationMs: invocation.durationMs,
        sealedResponse: sealed.sealed,
        responseKeyId: sealed.keyId,
        executedAt: started,
      },
    });
  } catch (error) {
    const failure = failureOf(error);
    if (!failure) throw error;
    return context.prisma.connectorCallApproval.update({
      where: { id: row.id },
      data: { outcome: failure.outcome, reason: failure.message, executedAt: started },
    });
  }
}

/** The opened input of a request (query, body, headers). */
export function openedInput(keyring: Keyring, row: ConnectorCallApproval): unknown {
  return openPart(keyring, row, 'input', {
    keyId: row.keyId,
    sealed: row.sealedInput,
  });
}

/** The opened response of an executed call (headers, body, redirects, responseValidation), or null. */
export function openedResponse(keyring: Keyring, row: ConnectorCallApproval): Record<string, unknown> | null {
  if (!row.sealedResponse || !row.responseKeyId) return null;
  return openPart(keyring, row, 'response', {
    keyId: row.responseKeyId,
    sealed: row.sealedResponse,
  }) as Record<string, unknown>;
}
