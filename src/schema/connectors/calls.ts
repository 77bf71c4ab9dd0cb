import { z } from 'zod';
import { type AuthedContext, builder } from '../../builder.js';
import { CONNECTOR_HTTP_METHODS, ENDPOINT_PATH_MAX_LENGTH } from '../../domain/connectors/endpoint-path.js';
import {
  type ConnectorInvocation,
  type ConnectorTestResult,
  checkCallerHeader,
  type InvocationOutcome,
  invokeConnector,
  type ResponseValidation,
  testConnector,
} from '../../domain/connectors/invoke.js';
import { leavingAdmission } from '../admission.js';
import { graphqlArg, idArg, zodField, zodInputType, zodSubscription } from '../args.js';
import { afterArg, eventStream } from '../event-stream.js';
import { ConnectorCallApprovalRef } from './approvals.js';

const MAX_CALLER_HEADERS = 50;
const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]{1,128}$/u;
const HEADER_VALUE = /^[^\r\n\0]{0,8192}$/u;

const isQueryScalar = (value: unknown) =>
  typeof value === 'string' ||
  typeof value === 'boolean' ||
  (typeof value === 'number' && Number.isFinite(value));

const querySchema = z.record(z.string().min(1).max(256), z.unknown()).superRefine((query, ctx) => {
  for (const [name, value] of Object.entries(query)) {
    if (isQueryScalar(value) || (Array.isArray(value) && value.length <= 100 && value.every(isQueryScalar)))
      continue;
    ctx.addIssue({
      code: 'custom',
      path: [name],
      input: value,
      message: 'a query value is a string, a number, a boolean or a list of at most 100 of them',
    });
  }
});

const headersSchema = z.record(z.string(), z.unknown()).superRefine((headers, ctx) => {
  const names = Object.keys(headers);
  if (names.length > MAX_CALLER_HEADERS) {
    ctx.addIssue({ code: 'custom', input: headers, message: `at most ${MAX_CALLER_HEADERS} headers` });
  }
  for (const name of names) {
    const value = headers[name];
    const reason = !HEADER_NAME.test(name)
      ? `${name} is not a valid header name`
      : (checkCallerHeader(name) ??
        (typeof value !== 'string' || !HEADER_VALUE.test(value)
          ? 'a header value is a string of at most 8192 characters without line breaks'
          : null));
    if (reason !== null) ctx.addIssue({ code: 'custom', path: [name], input: value, message: reason });
  }
});

const endpointRefInput = z.object({
  method: graphqlArg(z.enum(CONNECTOR_HTTP_METHODS), {
    type: 'String',
    description: CONNECTOR_HTTP_METHODS.join(', '),
  }),
  path: z.string().min(1).max(ENDPOINT_PATH_MAX_LENGTH),
});
zodInputType('ConnectorEndpointRefInput', endpointRefInput, {
  description: 'One endpoint of the connector’s template, named by its method and path exactly as stored.',
});

const callInput = z.object({
  query: graphqlArg(querySchema.nullish(), {
    type: 'JSON',
    description:
      'Query parameters: name → string, number, boolean or a list of them; checked against the endpoint’s query_params.',
  }),
  body: graphqlArg(z.unknown().optional(), {
    type: 'JSON',
    description: 'JSON body, checked against the endpoint’s body_schema.',
  }),
  headers: graphqlArg(headersSchema.nullish(), {
    type: 'JSON',
    description:
      'Extra request headers: name → string. Authorization, cookies, content and connection headers are set by the service.',
  }),
});
zodInputType('ConnectorCallInput', callInput, {
  description: 'What the caller chooses for one call; everything else comes from the template.',
});

export const invokeConnectorArgs = z.object({
  id: idArg(),
  endpoint: endpointRefInput,
  input: callInput.nullish(),
  taskId: graphqlArg(z.guid().nullish(), {
    type: 'ID',
    description:
      'The caller’s running task the call is made for (NOT_FOUND, CONFLICT or FORBIDDEN otherwise, and nothing is sent): the same call repeated within one task trips its role’s repeated-call breaker (docs/breakers.md).',
  }),
});

const ConnectorSchemaError = builder
  .objectRef<{ path: string; message: string }>('ConnectorSchemaError')
  .implement({
    description: 'One place where a response does not match the endpoint’s response_schema.',
    fields: (t) => ({
      path: t.exposeString('path', { description: 'JSON Pointer into the response body.' }),
      message: t.exposeString('message'),
    }),
  });

const ConnectorResponseValidation = builder
  .objectRef<ResponseValidation>('ConnectorResponseValidation')
  .implement({
    fields: (t) => ({
      valid: t.exposeBoolean('valid'),
      errors: t.field({ type: [ConnectorSchemaError], resolve: (validation) => validation.errors }),
    }),
  });

const ConnectorInvocationRef = builder.objectRef<ConnectorInvocation>('ConnectorInvocation').implement({
  description: 'The answer of a connector’s server to one call.',
  fields: (t) => ({
    connectorId: t.exposeID('connectorId'),
    method: t.exposeString('method'),
    path: t.exposeString('path'),
    status: t.exposeInt('status', { description: 'The server’s HTTP status; 4xx and 5xx are results too.' }),
    headers: t.expose('headers', {
      type: 'JSON',
      description: 'The response headers safe to pass on (content type, caching, rate limits, ...).',
    }),
    body: t.expose('body', {
      type: 'JSON',
      nullable: true,
      description: 'The body as JSON when it parses, else its text; null when empty. At most 1 MiB.',
    }),
    bytes: t.exposeInt('bytes', { description: 'Size of the response body.' }),
    durationMs: t.exposeInt('durationMs'),
    redirects: t.exposeInt('redirects', { description: 'Same-host redirects followed.' }),
    responseValidation: t.expose('responseValidation', {
      type: ConnectorResponseValidation,
      nullable: true,
      description: 'Whether the body matched the endpoint’s response_schema; null without one.',
    }),
  }),
});

const ConnectorTestResultRef = builder.objectRef<ConnectorTestResult>('ConnectorTestResult').implement({
  description: 'The answer to the probe: a HEAD request to the connector’s base_url.',
  fields: (t) => ({
    connectorId: t.exposeID('connectorId'),
    method: t.exposeString('method'),
    url: t.exposeString('url'),
    status: t.exposeInt('status'),
    durationMs: t.exposeInt('durationMs'),
  }),
});

const callErrors =
  'EGRESS_REFUSED (502) when the guard refuses the address, scheme or a redirect; UPSTREAM_FAILED (502) for DNS, ' +
  'TLS, connection failures or a body over 1 MiB; UPSTREAM_TIMEOUT (504) when it does not connect, answer or finish ' +
  'in time (the whole call within CONNECTOR_CALL_TIMEOUT_MS); RATE_LIMITED (429) beyond the tenant’s connector calls ' +
  'in flight (reason connector_calls_busy) or the template’s rate_limits; CONFLICT when the connector is disabled ' +
  'or its credential is missing or not usable (reason credential_unbound: set for another origin).';

const ConnectorInvokeResult = builder.unionType('ConnectorInvokeResult', {
  description:
    'The server’s answer (ConnectorInvocation), or, for an endpoint the connector’s approval policy gates, the call kept for a decision (ConnectorCallApproval, status pending): nothing was sent.',
  types: [ConnectorInvocationRef, ConnectorCallApprovalRef],
  resolveType: (value) =>
    (value as InvocationOutcome).kind === 'approval' ? 'ConnectorCallApproval' : 'ConnectorInvocation',
});

builder.mutationField('invokeConnector', (t) =>
  t.withAuth({ operator: true, agent: true }).field({
    type: ConnectorInvokeResult,
    description: `Calls one endpoint of a connector of the caller’s tenant (operator or agent); a gated endpoint's call waits for approval instead (NOT_CONFIGURED without CONNECTOR_SECRETS_KEY, which seals its input). ${callErrors}`,
    ...zodField(t, invokeConnectorArgs, (_root, { id, endpoint, input, taskId }, context) =>
      invokeConnector(
        context,
        context.services,
        {
          id,
          endpoint,
          taskId,
          input: input && {
            query: input.query as Record<string, string> | null | undefined,
            body: input.body,
            headers: input.headers as Record<string, string> | null | undefined,
          },
        },
        leavingAdmission(context),
      ),
    ),
  }),
);

builder.mutationField('testConnector', (t) =>
  t.withAuth({ operator: true, agent: true }).field({
    type: ConnectorTestResultRef,
    description: `Probes a connector with a HEAD request to its base_url (operator or agent). ${callErrors}`,
    ...zodField(t, z.object({ id: idArg() }), (_root, { id }, context) =>
      testConnector(context, context.services, id, leavingAdmission(context)),
    ),
  }),
);

export interface ConnectorInvokedPayload {
  event_id: string;
  tenant_id: string;
  connector_id: string;
  kind: string;
  method: string;
  path: string;
  outcome: string;
  status: number | null;
  duration_ms: number;
  response_bytes: number;
  actor: string;
  invoked_at: string;
}

export const ConnectorInvokedEvent = builder
  .objectRef<ConnectorInvokedPayload>('ConnectorInvokedEvent')
  .implement({
    description: 'A connector call was made (never its bodies or headers).',
    fields: (t) => ({
      eventId: t.exposeID('event_id'),
      tenantId: t.exposeID('tenant_id'),
      connectorId: t.exposeID('connector_id'),
      kind: t.exposeString('kind', { description: 'invoke or test.' }),
      method: t.exposeString('method'),
      path: t.exposeString('path'),
      outcome: t.exposeString('outcome', {
        description: 'success, upstream_error (status ≥ 400), or why the egress refused or failed.',
      }),
      status: t.exposeInt('status', { nullable: true }),
      durationMs: t.exposeInt('duration_ms'),
      responseBytes: t.exposeInt('response_bytes'),
      actor: t.exposeString('actor'),
      invokedAt: t.field({ type: 'DateTime', resolve: (event) => event.invoked_at }),
    }),
  });

const connectorInvokedArgs = z.object({ connectorId: idArg().nullish(), after: afterArg });

builder.subscriptionField('connectorInvoked', (t) =>
  t.withAuth({ authenticated: true }).field({
    type: ConnectorInvokedEvent,
    description: 'Connector calls in the subscriber’s tenant, optionally of one connector.',
    ...zodSubscription(t, connectorInvokedArgs, (_root, { connectorId, after }, context: AuthedContext) => {
      return eventStream(
        context,
        ['CONNECTOR_INVOKED'],
        after,
        (event) => !connectorId || event.payload.connector_id === connectorId,
      );
    }),
    resolve: (event) => event.payload as unknown as ConnectorInvokedPayload,
  }),
);
