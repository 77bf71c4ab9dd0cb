import { builder } from '../builder.js';

const RoleEnum = builder.enumType('Role', { values: ['chairman', 'operator', 'member', 'agent'] as const });

const ViewerRef = builder
  .objectRef<{ sub: string; tenantId: string; roles: readonly string[]; agentRoles?: readonly string[] }>(
    'Viewer',
  )
  .implement({
    description: 'The authenticated caller.',
    fields: (t) => ({
      sub: t.exposeString('sub', { description: 'User or agent id (the token subject).' }),
      tenantId: t.exposeID('tenantId'),
      roles: t.field({
        type: [RoleEnum],
        resolve: (viewer) => viewer.roles as ('chairman' | 'operator' | 'member' | 'agent')[],
      }),
      agentRoles: t.stringList({
        nullable: true,
        description:
          'The agent roles this agent token works for (its `agent_roles` claim): it claims, reads and hears of ' +
          'their tasks only. Null: every role of the tenant.',
        resolve: (viewer) => (viewer.agentRoles ? [...viewer.agentRoles] : null),
      }),
    }),
  });

builder.queryField('me', (t) =>
  t.withAuth({ authenticated: true }).field({
    type: ViewerRef,
    resolve: (_root, _args, context) => context.viewer,
  }),
);
