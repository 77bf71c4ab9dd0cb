import { createHash } from 'node:crypto';
import { recordAudit } from '../../audit.js';
import { type AgentRole, Prisma } from '../../generated/prisma/client.js';
import type { Actor } from '../actor.js';
import { Refusal } from '../errors.js';
import type { InspectedAttachment } from './attachments.js';
import type { DeliverableInput } from './completion-rules.js';
import { unknownAgentRole } from './registry.js';
import { roleScopeSql } from './role-binding.js';
import { normalizeRole } from './roles.js';

/**
 * Evidence for "done" (docs/deliverables.md): what a completion carries, how it is stored beside the task,
 * and the role's rule that a completion must carry some.
 */

/** A deliverable as the schema hands it over: a FILE's base64 `data` already checked as an attachment. */
export type ReceivedDeliverable = Omit<DeliverableInput, 'data'> & { file?: InspectedAttachment | undefined };

/** A deliverable ready to be written: its digest and size, and for a FILE the content to store. */
export interface DeliverableDraft {
  kind: 'text' | 'link' | 'file';
  title: string | null;
  text: string | null;
  url: string | null;
  /** Lower-case hex SHA-256 of the text (UTF-8), the URL, or the file's bytes. */
  sha256: string;
  mimeType: string | null;
  filename: string | null;
  /** Bytes: of the text (UTF-8), the URL or the file. */
  size: number;
  file: InspectedAttachment | null;
}

const digestOf = (text: string) => {
  const bytes = Buffer.from(text, 'utf8');
  return { sha256: createHash('sha256').update(bytes).digest('hex'), size: bytes.byteLength };
};

/** The drafts of a completion's deliverables, in the order reported. */
export function deliverableDrafts(received: readonly ReceivedDeliverable[]): DeliverableDraft[] {
  return received.map((deliverable) => {
    const title = deliverable.title ?? null;
    if (deliverable.kind === 'FILE') {
      const file = deliverable.file;
      if (!file) throw new Error('a FILE deliverable reached the domain without its checked content');
      return {
        kind: 'file',
        title,
        text: null,
        url: null,
        sha256: file.sha256,
        mimeType: file.mimeType,
        filename: file.filename,
        size: file.size,
        file,
      };
    }
    const text = deliverable.kind === 'TEXT' ? (deliverable.text ?? '') : null;
    const url = deliverable.kind === 'LINK' ? (deliverable.url ?? '') : null;
    return {
      kind: deliverable.kind === 'TEXT' ? 'text' : 'link',
      title,
      text,
      url,
      ...digestOf(text ?? url ?? ''),
      mimeType: null,
      filename: null,
      file: null,
    };
  });
}

/**
 * Reads the completion policy of the role of the caller's running task, and refuses a completion without
 * deliverables of a task whose role requires one (BAD_USER_INPUT, `deliverable_required`), before anything
 * is written. Answers the reviewer role whose acceptance the completion then waits for (null: none). Says
 * nothing of a task that is not the caller's running one: the completion itself then answers 404, 409 or
 * 403 as it always has.
 */
export async function checkCompletionPolicy(
  context: Actor,
  taskId: string,
  count: number,
): Promise<{ reviewerRole: string | null }> {
  const { tenantId, sub } = context.viewer;
  const [row] = await context.prisma.$queryRaw<
    { role: string; require_deliverable: boolean; reviewer_role: string | null }[]
  >`
    SELECT t.role, r.require_deliverable, r.reviewer_role FROM tasks t
    JOIN agent_roles r ON r.tenant_id = t.tenant_id AND r.role = t.role
    WHERE t.id = ${taskId}::uuid AND t.tenant_id = ${tenantId}::uuid AND t.status = 'running'
      AND t.claimed_by = ${sub} ${roleScopeSql(context.viewer, 't.role')}`;
  if (row?.require_deliverable && count === 0) {
    throw new Refusal(
      'BAD_USER_INPUT',
      `The role '${row.role}' requires at least one deliverable to complete a task`,
      { reason: 'deliverable_required', facts: { role: row.role } },
    );
  }
  return { reviewerRole: row?.reviewer_role ?? null };
}

/**
 * The CTE (after endRunningTask's `changed`) that stores a completion's deliverables beside its task, in
 * the order reported; empty when there are none.
 */
export function deliverablesInsert(drafts: readonly DeliverableDraft[]): Prisma.Sql {
  if (drafts.length === 0) return Prisma.empty;
  const column = <Key extends keyof DeliverableDraft>(key: Key) => drafts.map((draft) => draft[key]);
  return Prisma.sql`
    delivered AS (
      INSERT INTO task_deliverables
        (id, tenant_id, task_id, position, kind, title, text, url, sha256, mime_type, filename, size, created_at)
      SELECT gen_random_uuid(), c.tenant_id, c.id, d.position - 1, d.kind, d.title, d.text, d.url, d.sha256,
        d.mime_type, d.filename, d.size, c.updated_at
      FROM changed c, unnest(
        ${column('kind')}::text[], ${column('title')}::text[], ${column('text')}::text[], ${column('url')}::text[],
        ${column('sha256')}::text[], ${column('mimeType')}::text[], ${column('filename')}::text[],
        ${column('size')}::int[]
      ) WITH ORDINALITY AS d(kind, title, text, url, sha256, mime_type, filename, size, position)
    ),`;
}

export interface CompletionPolicy {
  /** Absent: unchanged. */
  requireDeliverable?: boolean | null | undefined;
  /** Another role of the tenant whose acceptance a completion needs; null: none; absent: unchanged. */
  reviewerRole?: string | null | undefined;
}

/**
 * Sets what a completion of a role's tasks must carry and who must accept it (the chairman's: the schema
 * checks who calls); a field left out keeps its value. NOT_FOUND (`unknown_role`) for a role the tenant does
 * not have, BAD_USER_INPUT for a reviewer role it does not have (`unknown_reviewer_role`) or the role itself
 * (`reviewer_is_role`); nothing is written when refused. Audited as `agent_role.completion_policy` with
 * the policy before and after. Tasks already in review keep the reviewer role of their completion.
 */
export async function setCompletionPolicy(
  context: Actor,
  rawRole: string,
  policy: CompletionPolicy,
): Promise<AgentRole> {
  const role = normalizeRole(rawRole);
  const { tenantId } = context.viewer;
  const reviewerRole =
    policy.reviewerRole === undefined || policy.reviewerRole === null
      ? policy.reviewerRole
      : normalizeRole(policy.reviewerRole);
  return context.prisma.$transaction(async (tx) => {
    const [current] = await tx.$queryRaw<{ require_deliverable: boolean; reviewer_role: string | null }[]>`
      SELECT require_deliverable, reviewer_role FROM agent_roles
      WHERE tenant_id = ${tenantId}::uuid AND role = ${role} FOR UPDATE`;
    if (!current) throw unknownAgentRole(role);
    if (reviewerRole === role) {
      throw new Refusal('BAD_USER_INPUT', `The role '${role}' cannot review its own tasks`, {
        reason: 'reviewer_is_role',
        facts: { role },
      });
    }
    if (reviewerRole) {
      const [reviewer] = await tx.$queryRaw<{ role: string }[]>`
        SELECT role FROM agent_roles WHERE tenant_id = ${tenantId}::uuid AND role = ${reviewerRole} FOR SHARE`;
      if (!reviewer) {
        throw new Refusal('BAD_USER_INPUT', `Unknown reviewer role '${reviewerRole}'`, {
          reason: 'unknown_reviewer_role',
          facts: { reviewerRole },
        });
      }
    }
    const updated = await tx.agentRole.update({
      where: { tenantId_role: { tenantId, role } },
      data: {
        ...(policy.requireDeliverable == null ? {} : { requireDeliverable: policy.requireDeliverable }),
        ...(reviewerRole === undefined ? {} : { reviewerRole }),
      },
    });
    await recordAudit(tx, context, {
      action: 'agent_role.completion_policy',
      targetType: 'agent_role',
      targetId: role,
      outcome: 'set',
      details: {
        require_deliverable: { from: current.require_deliverable, to: updated.requireDeliverable },
        reviewer_role: { from: current.reviewer_role, to: updated.reviewerRole },
      },
    });
    return updated;
  });
}
