import { randomUUID } from 'node:crypto';
import { recordAudit } from '../../audit.js';
import type { PrismaClient } from '../../db/client.js';
import { enqueueEvent } from '../../events/outbox.js';
import type { Connector, ConnectorCallApproval, Prisma } from '../../generated/prisma/client.js';
import type { Actor } from '../actor.js';
import { notConfigured } from '../errors.js';
import type { StoredApprovalPolicy } from './approval-policy.js';
import { originOf } from './base-url.js';
import type { EndpointRef, InvocationInput } from './invoke-request.js';
import { type Keyring, seal, unseal } from './sealing.js';
import type { StoredConnectorTemplate } from './template.js';

export const CALL_APPROVAL_STATUSES = [
  'pending',
  'approved',
  'rejected',
  'changes_requested',
  'expired',
  'cancelled',
] as const;
export type CallApprovalStatus = (typeof CALL_APPROVAL_STATUSES)[number];

const KEY_NOT_SET =
  'A gated connector call cannot be kept for approval: CONNECTOR_SECRETS_KEY is not set (its input is sealed at rest; see docs/operations.md, "Connector credentials")';

/** Binds a sealed input or response to its request: copied to another row, it no longer opens. */
const sealingContext = (row: Pick<ConnectorCallApproval, 'tenantId' | 'connectorId' | 'id'>, part: string) =>
  `connector-call\n${row.tenantId}\n${row.connectorId}\n${row.id}\n${part}`;

export function sealPart(
  keyring: Keyring,
  row: Pick<ConnectorCallApproval, 'tenantId' | 'connectorId' | 'id'>,
  part: 'input' | 'response',
  value: unknown,
) {
  if (keyring.length === 0) throw notConfigured(KEY_NOT_SET);
  return seal(keyring, JSON.stringify(value), sealingContext(row, part));
}

export function openPart(
  keyring: Keyring,
  row: Pick<ConnectorCallApproval, 'tenantId' | 'connectorId' | 'id'>,
  part: 'input' | 'response',
  sealed: { keyId: string; sealed: Uint8Array<ArrayBuffer> },
): unknown {
  return JSON.parse(unseal(keyring, sealed, sealingContext(row, part)));
}

/** The status a reader sees: a pending request past its expiry is expired, swept or not. */
export function effectiveStatus(
  row: Pick<ConnectorCallApproval, 'status' | 'expiresAt'>,
  now = new Date(),
): CallApprovalStatus {
  if (row.status === 'pending' && row.expiresAt <= now) return 'expired';
  return row.status as CallApprovalStatus;
}

/** The event payload of a request (never its input, note or response). */
export function approvalPayload(
  row: ConnectorCallApproval,
  status: CallApprovalStatus = effectiveStatus(row),
) {
  return {
    approval_id: row.id,
    connector_id: row.connectorId,
    method: row.method,
    path: row.path,
    status,
    requested_by: row.requestedBy,
    decided_by: row.decidedBy,
    reason: row.reason,
    expires_at: row.expiresAt.toISOString(),
    changed_at: new Date().toISOString(),
  };
}

/**
 * Keeps a validated call of a gated endpoint for a decision: its input sealed, the approvers and expiry of
 * the policy in force, with an audit row and a CONNECTOR_CALL_APPROVAL_REQUESTED event. Nothing is sent.
 */
export async function requestCallApproval(
  context: Actor,
  keyring: Keyring,
  connector: Connector,
  endpoint: EndpointRef,
  input: InvocationInput,
  taskId: string | null = null,
): Promise<ConnectorCallApproval> {
  const policy = connector.approvalPolicy as unknown as StoredApprovalPolicy;
  const template = connector.template as unknown as StoredConnectorTemplate;
  const id = randomUUID();
  const sealed = sealPart(keyring, { id, tenantId: connector.tenantId, connectorId: connector.id }, 'input', {
    query: input.query ?? null,
    body: input.body ?? null,
    headers: input.headers ?? null,
  });
  const now = new Date();
  return context.prisma.$transaction(async (tx) => {
    const row = await tx.connectorCallApproval.create({
      data: {
        id,
        tenantId: connector.tenantId,
        connectorId: connector.id,
        connectorVersion: connector.version,
        origin: originOf(template.base_url),
        method: endpoint.method,
        path: endpoint.path,
        status: 'pending',
        approverRoles: policy.approver_roles,
        keyId: sealed.keyId,
        sealedInput: sealed.sealed,
        requestedBy: context.viewer.sub,
        taskId,
        expiresAt: new Date(now.getTime() + policy.expires_in_seconds * 1000),
        createdAt: now,
        updatedAt: now,
      },
    });
    await recordAudit(tx, context, {
      action: 'connector.call.request',
      targetType: 'connector_call_approval',
      targetId: row.id,
      outcome: 'pending',
      details: {
        connector_id: connector.id,
        connector_version: connector.version,
        method: row.method,
        path: row.path,
        expires_at: row.expiresAt.toISOString(),
      },
    });
    await enqueueEvent(tx, {
      type: 'CONNECTOR_CALL_APPROVAL_REQUESTED',
      tenantId: row.tenantId,
      payload: approvalPayload(row),
    });
    return row;
  });
}

/** Announces rows that just left `pending` without a call: an audit row (by `actor`) and an event each. */
async function announceEnded(
  tx: Prisma.TransactionClient,
  rows: ConnectorCallApproval[],
  audit: (row: ConnectorCallApproval) => Promise<void>,
): Promise<void> {
  for (const row of rows) {
    await audit(row);
    await enqueueEvent(tx, {
      type: 'CONNECTOR_CALL_APPROVAL_DECIDED',
      tenantId: row.tenantId,
      payload: approvalPayload(row),
    });
  }
}

/**
 * Ends every request of a connector still waiting, in the caller's transaction: the connector moves to
 * its next version (`reason`: `origin_changed`, or `connector_changed` for any other edit or a policy
 * change), and a call is made only on the version it was requested against.
 */
export async function cancelPendingCalls(
  tx: Prisma.TransactionClient,
  context: Actor,
  connectorId: string,
  reason: string,
): Promise<void> {
  const rows = await tx.$queryRaw<{ id: string }[]>`
    UPDATE connector_call_approvals SET status = 'cancelled', reason = ${reason}, updated_at = now()
    WHERE connector_id = ${connectorId}::uuid AND status = 'pending' RETURNING id::text`;
  if (rows.length === 0) return;
  const ended = await tx.connectorCallApproval.findMany({ where: { id: { in: rows.map((row) => row.id) } } });
  await announceEnded(tx, ended, (row) =>
    recordAudit(tx, context, {
      action: 'connector.call.cancel',
      targetType: 'connector_call_approval',
      targetId: row.id,
      outcome: 'cancelled',
      details: { connector_id: row.connectorId, reason },
    }),
  );
}

/**
 * Marks as expired the requests (of one tenant, or all) still pending past their expiry, each audited and
 * announced once: the UPDATE's `status = 'pending'` lets only one sweep or decision end a row.
 */
export async function expireCallApprovals(
  prisma: PrismaClient,
  where: { id?: string } = {},
): Promise<number> {
  return prisma.$transaction(async (tx) => {
    const rows = await tx.$queryRaw<{ id: string }[]>`
      UPDATE connector_call_approvals SET status = 'expired', reason = 'expired', updated_at = now()
      WHERE status = 'pending' AND expires_at <= now()
        AND (${where.id ?? null}::uuid IS NULL OR id = ${where.id ?? null}::uuid)
      RETURNING id::text`;
    if (rows.length === 0) return 0;
    const ended = await tx.connectorCallApproval.findMany({
      where: { id: { in: rows.map((row) => row.id) } },
    });
    await announceEnded(tx, ended, async (row) => {
      await tx.auditEntry.create({
        data: {
          tenantId: row.tenantId,
          actor: 'system',
          action: 'connector.call.expire',
          targetType: 'connector_call_approval',
          targetId: row.id,
          outcome: 'expired',
          details: { connector_id: row.connectorId, expires_at: row.expiresAt.toISOString() },
        },
      });
    });
    return ended.length;
  });
}
