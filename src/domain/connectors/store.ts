import { recordAudit } from '../../audit.js';
import { enqueueEvent } from '../../events/outbox.js';
import { type Connector, Prisma } from '../../generated/prisma/client.js';
import type { Actor } from '../actor.js';
import { conflict, notFound, preconditionFailed } from '../errors.js';
import type { StoredApprovalPolicy } from './approval-policy.js';
import { originOf } from './base-url.js';
import { cancelPendingCalls } from './call-approvals-store.js';
import { connectorChanged, templateChanges } from './changes.js';
import { normalizeConnectorName } from './connector-name.js';
import { OriginChangeRefusedError } from './errors.js';
import { type ConnectorTemplateInput, type StoredConnectorTemplate, toStoredTemplate } from './template.js';

const nameTaken = (name: string) =>
  conflict(`A connector named '${name}' already exists (names are compared ignoring case)`);
const connectorNotFound = (id: string) => notFound(`Connector ${id} not found`);

function isUniqueViolation(error: unknown): boolean {
  return error instanceof Prisma.PrismaClientKnownRequestError && error.code === 'P2002';
}

/** Runs a write; a unique violation that slipped past the name check (a concurrent write) is a 409 too. */
async function guardingName<T>(name: string, write: () => Promise<T>): Promise<T> {
  try {
    return await write();
  } catch (error) {
    if (isUniqueViolation(error)) throw nameTaken(name);
    throw error;
  }
}

async function assertNameFree(
  tx: Prisma.TransactionClient,
  tenantId: string,
  name: string,
  nameKey: string,
  exceptId?: string,
): Promise<void> {
  const holder = await tx.connector.findFirst({
    where: { tenantId, nameKey, ...(exceptId ? { NOT: { id: exceptId } } : {}) },
    select: { id: true },
  });
  if (holder) throw nameTaken(name);
}

/** Creates an `active` connector at version 1, its first version row and an audit row, together. */
export async function createConnector(context: Actor, input: ConnectorTemplateInput): Promise<Connector> {
  const { tenantId, sub } = context.viewer;
  const template = toStoredTemplate(input);
  const nameKey = normalizeConnectorName(template.name);
  return guardingName(template.name, () =>
    context.prisma.$transaction(async (tx) => {
      await assertNameFree(tx, tenantId, template.name, nameKey);
      // One clock for both stamps, so a new connector never reads as updated before it was created.
      const now = new Date();
      const connector = await tx.connector.create({
        data: {
          createdAt: now,
          updatedAt: now,
          tenantId,
          name: template.name,
          nameKey,
          status: 'active',
          template: template as unknown as Prisma.InputJsonObject,
          version: 1,
          createdBy: sub,
          versions: {
            create: {
              version: 1,
              template: template as unknown as Prisma.InputJsonObject,
              createdBy: sub,
              createdAt: now,
            },
          },
        },
      });
      await recordAudit(tx, context, {
        action: 'connector.create',
        targetType: 'connector',
        targetId: connector.id,
        outcome: 'created',
        details: { name: template.name, version: 1, base_url: template.base_url },
      });
      await enqueueEvent(tx, connectorChanged(connector, ['created']));
      return connector;
    }),
  );
}

export interface UpdateConnectorCommand {
  id: string;
  template: ConnectorTemplateInput;
  /** The version the caller edited (`If-Match`); the edit is refused with 412 when it is no longer current. */
  expectedVersion?: number | null | undefined;
}

/**
 * Marks the connector's stored credential, if any, as unbound: it was set for another origin than the one
 * the connector calls from now on. `updated_at` stays the time the secret was set.
 */
async function unbindCredential(
  tx: Prisma.TransactionClient,
  context: Actor,
  connectorId: string,
  origin: string,
  now: Date,
): Promise<void> {
  const [unbound] = await tx.$queryRaw<{ fingerprint: string; origin: string }[]>`
    UPDATE connector_credentials SET unbound_at = ${now}
    WHERE connector_id = ${connectorId}::uuid AND unbound_at IS NULL
    RETURNING fingerprint, origin`;
  if (!unbound) return;
  await recordAudit(tx, context, {
    action: 'connector.credential.unbind',
    targetType: 'connector',
    targetId: connectorId,
    outcome: 'origin_changed',
    details: { fingerprint: unbound.fingerprint, bound_origin: unbound.origin, origin },
  });
}

/**
 * Replaces a connector's template as the next version, keeping every earlier version, with an audit row.
 * Moving `base_url` to another origin (scheme, host, port) is the chairman's alone, as creating a
 * connector is: anyone else is refused (FORBIDDEN, audited as `origin_change_refused`, nothing else
 * written). The chairman's move leaves the stored credential unbound until it is set again. Calls still
 * waiting for a decision are cancelled (`origin_changed`, else `connector_changed`): a call runs only on
 * the version it was requested against.
 */
export async function updateConnector(context: Actor, command: UpdateConnectorCommand): Promise<Connector> {
  const { tenantId, sub } = context.viewer;
  const template = toStoredTemplate(command.template);
  const nameKey = normalizeConnectorName(template.name);
  const outcome = await guardingName(template.name, () =>
    context.prisma.$transaction(async (tx) => {
      // Locks the row so concurrent edits get consecutive versions and each sees the version it replaces.
      const [current] = await tx.$queryRaw<
        {
          id: string;
          version: number;
          name: string;
          base_url: string;
          approval_policy: unknown;
          template: StoredConnectorTemplate;
        }[]
      >`
        SELECT id::text, version, name, template->>'base_url' AS base_url, approval_policy, template
        FROM connectors
        WHERE id = ${command.id}::uuid AND tenant_id = ${tenantId}::uuid FOR UPDATE`;
      if (!current) throw connectorNotFound(command.id);
      if (command.expectedVersion != null && command.expectedVersion !== current.version) {
        throw preconditionFailed(
          `Connector ${command.id} is at version ${current.version}, not ${command.expectedVersion}; read it again before editing`,
        );
      }
      const origin = originOf(current.base_url);
      const requestedOrigin = originOf(template.base_url);
      if (origin !== requestedOrigin && !context.viewer.roles.includes('chairman')) {
        // The refusal is committed as an audit row, and nothing else is written.
        await recordAudit(tx, context, {
          action: 'connector.update',
          targetType: 'connector',
          targetId: current.id,
          outcome: 'origin_change_refused',
          details: { version: current.version, origin, requested_origin: requestedOrigin },
        });
        return { refused: new OriginChangeRefusedError(current.id, origin, requestedOrigin) };
      }
      await assertNameFree(tx, tenantId, template.name, nameKey, current.id);
      const version = current.version + 1;
      const now = new Date();
      if (origin !== requestedOrigin) await unbindCredential(tx, context, current.id, requestedOrigin, now);
      // A waiting call runs only on the version it was requested against.
      await cancelPendingCalls(
        tx,
        context,
        current.id,
        origin !== requestedOrigin ? 'origin_changed' : 'connector_changed',
      );
      const connector = await tx.connector.update({
        where: { id: current.id },
        data: {
          updatedAt: now,
          name: template.name,
          nameKey,
          template: template as unknown as Prisma.InputJsonObject,
          version,
          versions: {
            create: {
              version,
              template: template as unknown as Prisma.InputJsonObject,
              approvalPolicy: current.approval_policy
                ? (current.approval_policy as Prisma.InputJsonObject)
                : Prisma.DbNull,
              createdBy: sub,
              createdAt: now,
            },
          },
        },
      });
      await recordAudit(tx, context, {
        action: 'connector.update',
        targetType: 'connector',
        targetId: connector.id,
        outcome: 'updated',
        details: {
          name: template.name,
          version,
          previous_version: current.version,
          ...(current.name !== template.name ? { previous_name: current.name } : {}),
          ...(origin !== requestedOrigin ? { origin: requestedOrigin, previous_origin: origin } : {}),
        },
      });
      const changes = templateChanges(current.template, template);
      if (changes.length > 0) await enqueueEvent(tx, connectorChanged(connector, changes));
      return { connector };
    }),
  );
  if ('refused' in outcome) throw outcome.refused;
  return outcome.connector;
}

/** One connector of the caller's tenant; another tenant's connector is not found. */
export async function findConnector(context: Actor, id: string): Promise<Connector> {
  const connector = await context.prisma.connector.findFirst({
    where: { id, tenantId: context.viewer.tenantId },
  });
  if (!connector) throw connectorNotFound(id);
  return connector;
}

export interface SetApprovalPolicyCommand {
  id: string;
  /** Null removes the policy: no endpoint waits for a decision any more. */
  policy: StoredApprovalPolicy | null;
  expectedVersion?: number | null | undefined;
}

/**
 * Sets (or removes) a connector's approval policy as its next version: the template is kept unchanged
 * and the version row records the policy beside it, with an audit row. Requests still waiting are
 * cancelled (`connector_changed`): a call runs only on the version it was requested against.
 */
export async function setConnectorApprovalPolicy(
  context: Actor,
  command: SetApprovalPolicyCommand,
): Promise<Connector> {
  const { tenantId, sub } = context.viewer;
  return context.prisma.$transaction(async (tx) => {
    const [current] = await tx.$queryRaw<{ id: string; version: number; template: Prisma.JsonObject }[]>`
      SELECT id::text, version, template FROM connectors
      WHERE id = ${command.id}::uuid AND tenant_id = ${tenantId}::uuid FOR UPDATE`;
    if (!current) throw connectorNotFound(command.id);
    if (command.expectedVersion != null && command.expectedVersion !== current.version) {
      throw preconditionFailed(
        `Connector ${command.id} is at version ${current.version}, not ${command.expectedVersion}; read it again before editing`,
      );
    }
    const version = current.version + 1;
    const now = new Date();
    await cancelPendingCalls(tx, context, current.id, 'connector_changed');
    const policy = command.policy ? (command.policy as unknown as Prisma.InputJsonObject) : Prisma.DbNull;
    const connector = await tx.connector.update({
      where: { id: current.id },
      data: {
        updatedAt: now,
        approvalPolicy: policy,
        version,
        versions: {
          create: {
            version,
            template: current.template,
            approvalPolicy: policy,
            createdBy: sub,
            createdAt: now,
          },
        },
      },
    });
    await recordAudit(tx, context, {
      action: 'connector.approval_policy.set',
      targetType: 'connector',
      targetId: connector.id,
      outcome: command.policy ? 'set' : 'cleared',
      details: { version, previous_version: current.version, policy: command.policy },
    });
    return connector;
  });
}
