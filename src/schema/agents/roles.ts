import { z } from 'zod';
import { builder } from '../../builder.js';
import { changeReporting } from '../../domain/agents/org-chart.js';
import {
  findAgentRole,
  listAgentRoles,
  registerAgentRole,
  requireAgentRole,
} from '../../domain/agents/registry.js';
import { AGENT_ROLE_PATTERN } from '../../domain/agents/roles.js';
import { type AgentVitals, agentVitals } from '../../domain/agents/vitals.js';
import { agentVitalsByHour } from '../../domain/agents/vitals-by-hour.js';
import { graphqlArg, zodField, zodInputType } from '../args.js';
import { AgentRoleRef, roleArg } from './types.js';

builder.queryField('agents', (t) =>
  t.withAuth({ authenticated: true }).field({
    type: [AgentRoleRef],
    description:
      'The agent roles of the caller’s tenant: the built-in C-suite first, then registered ones by name.',
    resolve: (_root, _args, context) => listAgentRoles(context),
  }),
);

builder.queryField('agent', (t) =>
  t.withAuth({ authenticated: true }).field({
    type: AgentRoleRef,
    nullable: true,
    description:
      'One agent role of the caller’s tenant (case-insensitive); null when the tenant has no such role.',
    ...zodField(t, z.object({ role: roleArg }), (_root, { role }, context) => findAgentRole(context, role)),
  }),
);

const registerInput = z.object({
  role: graphqlArg(z.string().regex(AGENT_ROLE_PATTERN), {
    description: 'A slug: a lower-case letter, then 1–63 of a–z, 0–9, _ and -.',
  }),
  displayName: z.string().trim().min(1).max(100).nullish(),
  reportsTo: graphqlArg(roleArg.nullish(), {
    description: 'The role it reports to in the org chart; default the CEO.',
  }),
});
zodInputType('RegisterAgentRoleInput', registerInput);

const registerArgs = z.object({ input: registerInput });

builder.mutationField('registerAgentRole', (t) =>
  t.withAuth({ operator: true, chairman: true }).field({
    type: AgentRoleRef,
    description: 'Adds an agent role to the caller’s tenant (operator or chairman); 409 when it exists.',
    ...zodField(t, registerArgs, (_root, { input }, context) => registerAgentRole(context, input)),
  }),
);

const reportingInput = z.object({
  reportsTo: graphqlArg(roleArg.nullish(), {
    description: 'The role it reports to from now; kept when omitted.',
  }),
  delegatesAcross: graphqlArg(z.boolean().nullish(), {
    description: 'Whether its tasks may delegate to roles with the same manager; kept when omitted.',
  }),
});
zodInputType('AgentReportingInput', reportingInput);

builder.mutationField('setAgentReporting', (t) =>
  t.withAuth({ chairman: true }).field({
    type: AgentRoleRef,
    description:
      'Moves a role in the org chart (chairman only): whom it reports to, and whether it may delegate across. BAD_USER_INPUT when the CEO would report to a role (`ceo_reports_to_board`) or the chart would loop (`reporting_cycle`, with `extensions.chain`); NOT_FOUND for an unknown role. Audited.',
    ...zodField(t, z.object({ role: roleArg, input: reportingInput }), (_root, { role, input }, context) =>
      changeReporting(context, {
        role,
        reportsTo: input.reportsTo ?? undefined,
        delegatesAcross: input.delegatesAcross ?? undefined,
      }),
    ),
  }),
);

const AgentVitalsRef = builder.objectRef<AgentVitals>('AgentVitals').implement({
  description: 'Performance of an agent role over the trailing 24 hours ending at the request.',
  fields: (t) => ({
    agentRole: t.exposeString('agentRole'),
    tasksCompleted: t.exposeInt('tasksCompleted'),
    tasksFailed: t.exposeInt('tasksFailed'),
    avgExecutionTimeSeconds: t.exposeFloat('avgExecutionTimeSeconds', {
      nullable: true,
      description: 'Mean of finish − start of completed tasks; null when none completed.',
    }),
    acceptanceRate: t.exposeFloat('acceptanceRate', {
      nullable: true,
      description: 'Accepted / decided recommendations; null when none was decided.',
    }),
    outcomeAccuracy: t.exposeFloat('outcomeAccuracy', {
      nullable: true,
      description: 'Matched / evaluated predicted outcomes; null when none was evaluated.',
    }),
    tokensUsed: t.expose('tokensUsed', { type: 'SafeInt' }),
    costUsd: t.exposeFloat('costUsd'),
    periodStart: t.expose('periodStart', { type: 'DateTime' }),
    periodEnd: t.expose('periodEnd', { type: 'DateTime' }),
  }),
});

builder.queryField('agentVitals', (t) =>
  t.withAuth({ authenticated: true }).field({
    type: AgentVitalsRef,
    description: 'Vital signs of an agent role; 404 for a role the tenant does not have.',
    ...zodField(t, z.object({ role: roleArg }), (_root, { role }, context) => agentVitals(context, role)),
  }),
);

builder.queryField('agentVitalsByHour', (t) =>
  t.withAuth({ authenticated: true }).field({
    type: [AgentVitalsRef],
    description:
      'Vital signs of an agent role for each hour of the trailing 24 hours ending at the request, oldest ' +
      'first: 24 periods that tile the period of agentVitals (the last ends at the request), each counted ' +
      'by the same rules, so their counts and sums add up to it. 404 for a role the tenant does not have.',
    ...zodField(t, z.object({ role: roleArg }), async (_root, { role }, context) => {
      const found = await requireAgentRole(context, role);
      return agentVitalsByHour(context.prisma, context.viewer.tenantId, found.role);
    }),
  }),
);
