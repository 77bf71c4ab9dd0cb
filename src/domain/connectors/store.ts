import { recordAudit } from '../../audit.js';
import type { Context } from '../../context.js';
import { conflict, notFound, preconditionFailed } from '../../errors.js';
import { type Connector, Prisma } from '../../generated/prisma/client.js';
import { normalizeConnectorName } from './connector-name.js';
import { type ConnectorTemplateInput, toStoredTemplate } from './template.js';

type AuthedContext = Context & { viewer: NonNullable<Context['viewer']> };

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
export async function createConnector(
  context: AuthedContext,
  input: ConnectorTemplateInput,
): Promise<Connector> {
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

/** Replaces a connector's template as the next version, keeping every earlier version, with an audit row. */
export async function updateConnector(
  context: AuthedContext,
  command: UpdateConnectorCommand,
): Promise<Connector> {
  const { tenantId, sub } = context.viewer;
  const template = toStoredTemplate(command.template);
  const nameKey = normalizeConnectorName(template.name);
  return guardingName(template.name, () =>
    context.prisma.$transaction(async (tx) => {
      // Locks the row so concurrent edits get consecutive versions and each sees the version it replaces.
      const [current] = await tx.$queryRaw<{ id: string; version: number; name: string }[]>`
        SELECT id::text, version, name FROM connectors
        WHERE id = ${command.id}::uuid AND tenant_id = ${tenantId}::uuid FOR UPDATE`;
      if (!current) throw connectorNotFound(command.id);
      if (command.expectedVersion != null && command.expectedVersion !== current.version) {
        throw preconditionFailed(
          `Connector ${command.id} is at version ${current.version}, not ${command.expectedVersion}; read it again before editing`,
        );
      }
      await assertNameFree(tx, tenantId, template.name, nameKey, current.id);
      const version = current.version + 1;
      const now = new Date();
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
        },
      });
      return connector;
    }),
  );
}

/** One connector of the caller's tenant; another tenant's connector is not found. */
export async function findConnector(context: AuthedContext, id: string): Promise<Connector> {
  const connector = await context.prisma.connector.findFirst({
    where: { id, tenantId: context.viewer.tenantId },
  });
  if (!connector) throw connectorNotFound(id);
  return connector;
}
