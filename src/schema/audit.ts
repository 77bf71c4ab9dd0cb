import { z } from 'zod';
import { builder } from '../builder.js';
import { graphqlArg, zodField } from './args.js';
import { afterCursor, newestFirst, pageArgsSchema, pageType, toPage } from './pagination.js';

const AuditEntryRef = builder.prismaObject('AuditEntry', {
  fields: (t) => ({
    id: t.exposeID('id'),
    actor: t.exposeString('actor', {
      description: 'Who acted: the token subject, or the actor named in the request.',
    }),
    action: t.exposeString('action'),
    targetType: t.exposeString('targetType'),
    targetId: t.exposeString('targetId'),
    outcome: t.exposeString('outcome'),
    details: t.expose('details', { type: 'JSON' }),
    requestId: t.exposeString('requestId', { nullable: true }),
    createdAt: t.expose('createdAt', { type: 'DateTime' }),
  }),
});

const AuditEntryPage = pageType('AuditEntry', AuditEntryRef);

const auditLogArgs = z.object({
  ...pageArgsSchema,
  action: graphqlArg(z.string().max(100).nullish(), { description: 'e.g. agent.pause' }),
});

builder.queryField('auditLog', (t) =>
  t.withAuth({ operator: true, chairman: true }).field({
    type: AuditEntryPage,
    description: 'The tenant’s audit trail, newest first (operator or chairman).',
    ...zodField(t, auditLogArgs, async (_root, { first, after, action }, context) => {
      const rows = await context.prisma.auditEntry.findMany({
        where: { tenantId: context.viewer.tenantId, ...(action ? { action } : {}), ...afterCursor(after) },
        orderBy: newestFirst,
        take: first + 1,
      });
      return toPage(rows, first);
    }),
  }),
);
