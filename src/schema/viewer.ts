import { builder } from '../builder.js';

const RoleEnum = builder.enumType('Role', { values: ['chairman', 'operator', 'member', 'agent'] as const });

const ViewerRef = builder
  .objectRef<{ sub: string; tenantId: string; roles: readonly string[] }>('Viewer')
  .implement({
    description: 'The authenticated caller.',
    fields: (t) => ({
      sub: t.exposeString('sub', { description: 'User or agent id (the token subject).' }),
      tenantId: t.exposeID('tenantId'),
      roles: t.field({
        type: [RoleEnum],
        resolve: (viewer) => viewer.roles as ('chairman' | 'operator' | 'member' | 'agent')[],
      }),
    }),
  });

builder.queryField('me', (t) =>
  t.withAuth({ authenticated: true }).field({
    type: ViewerRef,
    resolve: (_root, _args, context) => context.viewer,
  }),
);
