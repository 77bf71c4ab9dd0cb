import type { Context } from './context.js';
import type { Prisma } from './generated/prisma/client.js';

export interface AuditRecord {
  action: string;
  targetType: string;
  targetId: string;
  outcome: string;
  details?: Record<string, unknown>;
  /** Defaults to the token subject. */
  actor?: string;
}

/** Writes an audit row in the caller's transaction, stamped with tenant, subject and request id. */
export async function recordAudit(
  tx: Prisma.TransactionClient,
  context: Pick<Context, 'viewer' | 'requestId'>,
  record: AuditRecord,
): Promise<void> {
  const viewer = context.viewer;
  if (!viewer) throw new Error('audit needs an authenticated viewer');
  await tx.auditEntry.create({
    data: {
      tenantId: viewer.tenantId,
      actor: record.actor ?? viewer.sub,
      action: record.action,
      targetType: record.targetType,
      targetId: record.targetId,
      outcome: record.outcome,
      details: { subject: viewer.sub, ...record.details } as Prisma.InputJsonValue,
      requestId: context.requestId,
    },
  });
}
