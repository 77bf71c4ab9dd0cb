import { z } from 'zod';
import { builder } from '../builder.js';
import {
  APPROVAL_EXPIRY_MAX_SECONDS,
  APPROVAL_EXPIRY_MIN_SECONDS,
  APPROVAL_MAX_RULES,
  APPROVAL_PATH_MAX_LENGTH,
  APPROVER_ROLES,
  checkPathPattern,
  toStoredPolicy,
} from '../domain/connectors/approval-policy.js';
import {
  CONNECTOR_AUTH_TYPES,
  CONNECTOR_HTTP_METHODS,
  checkBaseUrl,
  checkEndpointPath,
} from '../domain/connectors/index.js';
import { querySchemaOf } from '../domain/connectors/invoke-request.js';
import { findRefusedPatterns } from '../domain/connectors/schema-patterns.js';
import {
  createConnector,
  findConnector,
  setConnectorApprovalPolicy,
  updateConnector,
} from '../domain/connectors/store.js';
import {
  CONNECTOR_DESCRIPTION_MAX_LENGTH,
  CONNECTOR_MAX_ENDPOINTS,
  CONNECTOR_NAME_MAX_LENGTH,
  CONNECTOR_STATUSES,
  checkRateLimitOrder,
} from '../domain/connectors/template.js';
import { afterCursor, newestFirst, pageArgsSchema, pageType, toPage } from './pagination.js';
import './connectors/calls.js';
import { graphqlArg, idArg, zodField, zodInputType } from './args.js';

const ConnectorStatus = builder.enumType('ConnectorStatus', { values: CONNECTOR_STATUSES });

builder.prismaObject('ConnectorVersion', {
  description: 'One kept version of a connector template.',
  fields: (t) => ({
    id: t.exposeID('id'),
    connectorId: t.exposeID('connectorId'),
    version: t.exposeInt('version'),
    template: t.expose('template', {
      type: 'JSON',
      description: 'The template of this version, in its REST spelling.',
    }),
    approvalPolicy: t.expose('approvalPolicy', {
      type: 'JSON',
      nullable: true,
      description: 'The approval policy in force from this version on, in its REST spelling; null: none.',
    }),
    createdBy: t.exposeString('createdBy'),
    createdAt: t.expose('createdAt', { type: 'DateTime' }),
  }),
});

export const ConnectorRef = builder.prismaObject('Connector', {
  description: 'A tenant-supplied outbound connector template.',
  fields: (t) => ({
    id: t.exposeID('id'),
    tenantId: t.exposeID('tenantId'),
    name: t.exposeString('name'),
    status: t.expose('status', { type: ConnectorStatus }),
    template: t.expose('template', {
      type: 'JSON',
      description:
        'The current template as stored, in its REST spelling (base_url, auth_type, endpoints, rate_limits).',
    }),
    approvalPolicy: t.expose('approvalPolicy', {
      type: 'JSON',
      nullable: true,
      description:
        'Which endpoints wait for a decision before they are called, who decides and how long a request waits (rules, approver_roles, expires_in_seconds); null: no endpoint is gated. Kept beside the template, which it never changes.',
    }),
    version: t.exposeInt('version'),
    createdBy: t.exposeString('createdBy'),
    createdAt: t.expose('createdAt', { type: 'DateTime' }),
    updatedAt: t.expose('updatedAt', { type: 'DateTime' }),
    versions: t.relation('versions', {
      description: 'Every version of the template, newest first.',
      query: { orderBy: { version: 'desc' } },
    }),
    credential: t.relation('credential', {
      nullable: true,
      description: 'The stored secret’s fingerprint and stamps (never the secret); null when none is set.',
    }),
  }),
});

const ConnectorPage = pageType('Connector', ConnectorRef);

/** A zod refinement from a check that returns the reason for a problem, or null. */
const reportReason = (check: (value: string) => string | null) => (value: string, ctx: z.RefinementCtx) => {
  const reason = check(value);
  if (reason !== null) ctx.addIssue({ code: 'custom', message: reason, input: value });
};

const CONTROL_CHARACTER = /\p{Cc}/u;

function checkName(name: string): string | null {
  // The empty name is already too short.
  if (name !== '' && name.trim() === '') return 'name must not be blank';
  if (CONTROL_CHARACTER.test(name)) return 'name must not contain control characters';
  return null;
}

const jsonObject = graphqlArg(z.record(z.string(), z.unknown()), { type: 'JSON' });
const rateLimit = z.int32().min(1).optional();

const rateLimitsSchema = z
  .object({ perMinute: rateLimit, perHour: rateLimit, perDay: rateLimit })
  .superRefine((limits, ctx) => {
    // Limits that already failed their own rule are left out, so each problem is reported once.
    const valid = (value: number | null | undefined) =>
      Number.isInteger(value) && Number(value) >= 1 ? value : null;
    const comparable = {
      perMinute: valid(limits.perMinute),
      perHour: valid(limits.perHour),
      perDay: valid(limits.perDay),
    };
    for (const violation of checkRateLimitOrder(comparable)) {
      ctx.addIssue({
        code: 'custom',
        message: violation.message,
        path: [violation.field],
        input: limits[violation.field],
      });
    }
  });
zodInputType('RateLimitsInput', rateLimitsSchema, {
  description:
    'Limits of the connector itself; each at least 1, and perMinute ≤ perHour ≤ perDay where given.',
});

/**
 * Patterns of an endpoint's schemas that the linear-time engine cannot evaluate, each reported at its
 * place (`query_params` written as name → schema keeps the parameter name in the place).
 */
function reportRefusedPatterns(
  endpoint: Partial<
    Record<'bodySchema' | 'queryParams' | 'responseSchema', Record<string, unknown> | null | undefined>
  >,
  ctx: z.RefinementCtx,
) {
  const found = [
    ...findRefusedPatterns(endpoint.bodySchema, ['bodySchema']),
    ...findRefusedPatterns(endpoint.responseSchema, ['responseSchema']),
  ];
  if (endpoint.queryParams) {
    const schema = querySchemaOf(endpoint.queryParams);
    const named = schema !== endpoint.queryParams;
    for (const problem of findRefusedPatterns(schema)) {
      found.push({ ...problem, path: ['queryParams', ...(named ? problem.path.slice(1) : problem.path)] });
    }
  }
  for (const { path, pattern, message } of found) {
    ctx.addIssue({ code: 'custom', path, input: pattern, message });
  }
}

const endpointSchema = z
  .object({
    method: graphqlArg(z.enum(CONNECTOR_HTTP_METHODS), {
      type: 'String',
      description: CONNECTOR_HTTP_METHODS.join(', '),
    }),
    path: graphqlArg(z.string().superRefine(reportReason(checkEndpointPath)), {
      description: 'Starts with /, without .. segments.',
    }),
    bodySchema: jsonObject.optional(),
    queryParams: jsonObject.optional(),
    responseSchema: jsonObject.optional(),
  })
  .superRefine(reportRefusedPatterns);
zodInputType('ConnectorEndpointInput', endpointSchema);

export const connectorTemplateSchema = z.object({
  name: graphqlArg(z.string().min(1).max(CONNECTOR_NAME_MAX_LENGTH).superRefine(reportReason(checkName)), {
    description: 'Unique in the tenant, ignoring case.',
  }),
  baseUrl: graphqlArg(z.string().superRefine(reportReason(checkBaseUrl)), {
    description: 'Absolute https URL of a public host.',
  }),
  authType: graphqlArg(z.enum(CONNECTOR_AUTH_TYPES), {
    type: 'String',
    description: CONNECTOR_AUTH_TYPES.join(', '),
  }),
  description: z.string().max(CONNECTOR_DESCRIPTION_MAX_LENGTH).optional(),
  endpoints: z.array(endpointSchema).max(CONNECTOR_MAX_ENDPOINTS).optional(),
  rateLimits: rateLimitsSchema.optional(),
});

zodInputType('ConnectorTemplateInput', connectorTemplateSchema);

const connectorInputSchema = z.object({ template: connectorTemplateSchema });
zodInputType('ConnectorInput', connectorInputSchema);
const connectorId = idArg();

export const createConnectorArgs = z.object({ input: connectorInputSchema });
export const updateConnectorArgs = z.object({
  id: connectorId,
  input: connectorInputSchema,
  expectedVersion: graphqlArg(z.int32().min(1).nullish(), {
    description: 'Refuse the edit (PRECONDITION_FAILED) unless this is the current version.',
  }),
});

builder.mutationField('createConnector', (t) =>
  t.withAuth({ chairman: true }).field({
    type: ConnectorRef,
    description:
      'Creates an active connector at version 1 (chairman only: each connector is a new outbound trust boundary).',
    ...zodField(t, createConnectorArgs, (_root, { input }, context) =>
      createConnector(context, input.template),
    ),
  }),
);

builder.mutationField('updateConnector', (t) =>
  t.withAuth({ operator: true, chairman: true }).field({
    type: ConnectorRef,
    description:
      'Replaces the template as the next version; earlier versions are kept (operator or chairman). Calls still waiting for a decision are cancelled (they run only on the version they were requested against). Moving base_url to another origin (scheme, host, port) is the chairman’s alone (FORBIDDEN, reason origin_change_refused, audited) and leaves the stored credential unusable until it is set again.',
    ...zodField(t, updateConnectorArgs, (_root, { id, input, expectedVersion }, context) =>
      updateConnector(context, { id, template: input.template, expectedVersion }),
    ),
  }),
);

builder.queryField('connector', (t) =>
  t.withAuth({ authenticated: true }).field({
    type: ConnectorRef,
    description: 'One connector of the caller’s tenant (NOT_FOUND otherwise).',
    ...zodField(t, z.object({ id: connectorId }), (_root, { id }, context) => findConnector(context, id)),
  }),
);

builder.queryField('connectors', (t) =>
  t.withAuth({ authenticated: true }).field({
    type: ConnectorPage,
    description: 'The tenant’s connectors, newest first.',
    ...zodField(t, z.object(pageArgsSchema), async (_root, { first, after }, context) => {
      const rows = await context.prisma.connector.findMany({
        where: { tenantId: context.viewer.tenantId, ...afterCursor(after) },
        orderBy: newestFirst,
        take: first + 1,
      });
      return toPage(rows, first);
    }),
  }),
);

const approvalRuleSchema = z.object({
  methods: graphqlArg(z.array(graphqlArg(z.enum(CONNECTOR_HTTP_METHODS), { type: 'String' })).min(1), {
    description: `${CONNECTOR_HTTP_METHODS.join(', ')}; a method override header or _method parameter counts as the method it names.`,
  }),
  path: graphqlArg(
    z.string().max(APPROVAL_PATH_MAX_LENGTH).superRefine(reportReason(checkPathPattern)).nullish(),
    {
      description:
        'A path on the connector’s server, as requests are sent: base_url’s path and the endpoint’s together (/v1/customers/* for base_url https://api.example.com/v1 and endpoints /customers/…), dot segments resolved, escapes and case ignored. A segment `*` matches any one segment, `**` any number; no query string. Default /** (every call).',
    },
  ),
});
zodInputType('ConnectorApprovalRuleInput', approvalRuleSchema, {
  description:
    'Calls that wait for a decision: those of one of `methods` whose request path (as sent) matches `path`.',
});

const approvalPolicySchema = z.object({
  rules: graphqlArg(z.array(approvalRuleSchema).min(1).max(APPROVAL_MAX_RULES), {
    description: `1 to ${APPROVAL_MAX_RULES}.`,
  }),
  approverRoles: graphqlArg(
    z
      .array(graphqlArg(z.enum(APPROVER_ROLES), { type: 'String' }))
      .max(APPROVER_ROLES.length)
      .nullish(),
    { description: 'chairman (always), and operator to let operators decide too. Default: chairman.' },
  ),
  expiresInSeconds: graphqlArg(
    z.int32().min(APPROVAL_EXPIRY_MIN_SECONDS).max(APPROVAL_EXPIRY_MAX_SECONDS).nullish(),
    {
      description: `How long a request waits for a decision: ${APPROVAL_EXPIRY_MIN_SECONDS} to ${APPROVAL_EXPIRY_MAX_SECONDS}; default 86400.`,
    },
  ),
});
zodInputType('ConnectorApprovalPolicyInput', approvalPolicySchema);

export const setApprovalPolicyArgs = z.object({
  id: connectorId,
  policy: approvalPolicySchema.nullish(),
  expectedVersion: graphqlArg(z.int32().min(1).nullish(), {
    description: 'Refuse the change (PRECONDITION_FAILED) unless this is the current version.',
  }),
});

builder.mutationField('setConnectorApprovalPolicy', (t) =>
  t.withAuth({ chairman: true }).field({
    type: ConnectorRef,
    description:
      'Sets which endpoints of a connector wait for a decision before they are called, or removes the policy with `policy: null` (chairman only). The template is kept; the connector moves to its next version, audited, and calls still waiting for a decision are cancelled.',
    ...zodField(t, setApprovalPolicyArgs, (_root, { id, policy, expectedVersion }, context) =>
      setConnectorApprovalPolicy(context, {
        id,
        policy: policy ? toStoredPolicy(policy) : null,
        expectedVersion,
      }),
    ),
  }),
);
