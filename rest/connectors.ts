import { z } from 'zod';
import { graphql } from '../src/generated/graphql/index.js';
import { renamed, responseSchemaOf } from './response-schema.js';
import { defineRoute, fromBody, fromHeader, fromPath, fromQuery } from './route.js';

graphql(`
  fragment ConnectorWire on Connector {
    id
    tenant_id: tenantId
    status
    template
    version
    created_at: createdAt
    updated_at: updatedAt
  }
`);

const CreateConnector = graphql(`
  mutation CreateConnector($input: ConnectorInput!) {
    createConnector(input: $input) {
      ...ConnectorWire
    }
  }
`);

const UpdateConnector = graphql(`
  mutation UpdateConnector($id: ID!, $input: ConnectorInput!, $expectedVersion: Int) {
    updateConnector(id: $id, input: $input, expectedVersion: $expectedVersion) {
      ...ConnectorWire
    }
  }
`);

const ReadConnector = graphql(`
  query ReadConnector($id: ID!) {
    connector(id: $id) {
      ...ConnectorWire
    }
  }
`);

const ListConnectors = graphql(`
  query ListConnectors($first: Int, $after: String) {
    connectors(first: $first, after: $after) {
      data: nodes {
        ...ConnectorWire
      }
      next_cursor: nextCursor
    }
  }
`);

graphql(`
  fragment ConnectorCredentialWire on Connector {
    connector_id: id
    credential {
      auth_type: authType
      fingerprint
      updated_at: updatedAt
      origin
      usable
      unusable_reason: unusableReason
    }
  }
`);

const ReadConnectorCredential = graphql(`
  query ReadConnectorCredential($id: ID!) {
    connector(id: $id) {
      ...ConnectorCredentialWire
    }
  }
`);

const SetConnectorCredential = graphql(`
  mutation SetConnectorCredential($id: ID!, $input: ConnectorCredentialInput!) {
    setConnectorCredential(id: $id, input: $input) {
      ...ConnectorCredentialWire
    }
  }
`);

const ClearConnectorCredential = graphql(`
  mutation ClearConnectorCredential($id: ID!) {
    clearConnectorCredential(id: $id) {
      ...ConnectorCredentialWire
    }
  }
`);

const credentialResponse = responseSchemaOf(ReadConnectorCredential, { connector_id: 'uuid' });

const credentialExample = {
  connector_id: '0b8e9f4c-5a1d-4c2e-8f3b-7d6a5e4c3b2a',
  credential: {
    auth_type: 'bearer',
    fingerprint: 'hmac:3f9a0c41d2e87b65',
    updated_at: '2026-11-22T10:15:00.000Z',
    origin: 'https://api.stripe.com',
    usable: true,
    unusable_reason: null,
  },
};

graphql(`
  fragment ConnectorApprovalPolicyWire on Connector {
    connector_id: id
    version
    approval_policy: approvalPolicy
  }
`);

const ReadApprovalPolicy = graphql(`
  query ReadConnectorApprovalPolicy($id: ID!) {
    connector(id: $id) {
      ...ConnectorApprovalPolicyWire
    }
  }
`);

const SetApprovalPolicy = graphql(`
  mutation SetConnectorApprovalPolicy($id: ID!, $policy: ConnectorApprovalPolicyInput, $expectedVersion: Int) {
    setConnectorApprovalPolicy(id: $id, policy: $policy, expectedVersion: $expectedVersion) {
      ...ConnectorApprovalPolicyWire
    }
  }
`);

const ClearApprovalPolicy = graphql(`
  mutation ClearConnectorApprovalPolicy($id: ID!, $expectedVersion: Int) {
    setConnectorApprovalPolicy(id: $id, policy: null, expectedVersion: $expectedVersion) {
      ...ConnectorApprovalPolicyWire
    }
  }
`);

// GraphQL answers the policy as JSON; REST documents its shape.
const policyResponse = responseSchemaOf(ReadApprovalPolicy, {
  connector_id: 'uuid',
  approval_policy: z
    .object({
      rules: z.array(z.object({ methods: z.array(z.string()), path: z.string() })),
      approver_roles: z.array(z.string()),
      expires_in_seconds: z.int(),
    })
    .nullable(),
});

const policyExample = {
  connector_id: '0b8e9f4c-5a1d-4c2e-8f3b-7d6a5e4c3b2a',
  version: 2,
  approval_policy: {
    rules: [{ methods: ['POST', 'PUT', 'PATCH', 'DELETE'], path: '/**' }],
    approver_roles: ['chairman', 'operator'],
    expires_in_seconds: 86400,
  },
};

const credentialErrors = { 404: 'No connector of the caller’s tenant has this id.' } as const;

const InvokeConnector = graphql(`
  mutation InvokeConnector($id: ID!, $endpoint: ConnectorEndpointRefInput!, $input: ConnectorCallInput) {
    invokeConnector(id: $id, endpoint: $endpoint, input: $input) {
      __typename
      ... on ConnectorInvocation {
        connector_id: connectorId
        method
        path
        status
        headers
        body
        bytes
        duration_ms: durationMs
        redirects
        response_validation: responseValidation {
          valid
          errors {
            path
            message
          }
        }
      }
      ... on ConnectorCallApproval {
        id
        connector_id: connectorId
        connector_version: connectorVersion
        method
        path
        approval_status: status
        approver_roles: approverRoles
        requested_by: requestedBy
        expires_at: expiresAt
        created_at: createdAt
      }
    }
  }
`);

const TestConnector = graphql(`
  mutation TestConnector($id: ID!) {
    testConnector(id: $id) {
      connector_id: connectorId
      method
      url
      status
      duration_ms: durationMs
    }
  }
`);

const callErrors = {
  404: 'No connector of the caller’s tenant has this id.',
  409: 'The connector is disabled, or its credential is missing or unusable (set for another origin or auth type).',
  502: 'The egress guard refused the call (a non-public address not in CONNECTOR_EGRESS_ALLOW, plain http, a redirect to another host or more than 3 redirects), or the server could not be used (DNS, TLS, connection, a body over 1 MiB).',
  504: 'The server did not connect, answer or finish its body in time, or the whole call (token request, redirects and body) outlasted `CONNECTOR_CALL_TIMEOUT_MS`.',
};

const connectorResponse = responseSchemaOf(ReadConnector, {
  id: 'uuid',
  tenant_id: 'uuid',
  template: z.record(z.string(), z.unknown()),
});

const connectorExample = {
  id: '0b8e9f4c-5a1d-4c2e-8f3b-7d6a5e4c3b2a',
  tenant_id: '00000000-0000-4000-8000-00000000de30',
  status: 'active',
  template: {
    name: 'Stripe',
    base_url: 'https://api.stripe.com/v1',
    auth_type: 'bearer',
    description: 'Payments',
    endpoints: [{ method: 'GET', path: '/customers', query_params: { limit: { type: 'integer' } } }],
    rate_limits: { per_minute: 100, per_hour: 1000, per_day: 10000 },
  },
  version: 1,
  created_at: '2026-11-22T09:30:00.000Z',
  updated_at: '2026-11-22T09:30:00.000Z',
};

const etag = { ETag: 'The connector’s version as an entity tag, e.g. `"1"`; send it back in `If-Match`.' };

const templateExample = {
  template: {
    name: 'Stripe',
    base_url: 'https://api.stripe.com/v1',
    auth_type: 'bearer',
    description: 'Payments',
    endpoints: [{ method: 'GET', path: '/customers', query_params: { limit: { type: 'integer' } } }],
    rate_limits: { per_minute: 100, per_hour: 1000, per_day: 10000 },
  },
};

// The 202 answer: the kept call, whose `approval_status` `respond` answers as `status`.
const pendingResponse = renamed(
  responseSchemaOf(
    InvokeConnector,
    { id: 'uuid', connector_id: 'uuid', approval_status: z.literal('pending') },
    { on: 'ConnectorCallApproval' },
  ).omit({ __typename: true }),
  { approval_status: 'status' },
);

const pendingExample = {
  id: '5d7c2a10-3b4e-4f6a-9c8d-1e2f3a4b5c6d',
  connector_id: '0b8e9f4c-5a1d-4c2e-8f3b-7d6a5e4c3b2a',
  connector_version: 2,
  method: 'POST',
  path: '/customers',
  status: 'pending',
  approver_roles: ['chairman'],
  requested_by: 'agent-cfo',
  expires_at: '2026-11-23T09:30:00.000Z',
  created_at: '2026-11-22T09:30:00.000Z',
};

const invocationResponse = responseSchemaOf(
  InvokeConnector,
  { connector_id: 'uuid', headers: z.record(z.string(), z.string()) },
  { on: 'ConnectorInvocation' },
).omit({ __typename: true });

export const connectorsRoutes = [
  defineRoute({
    method: 'POST',
    path: '/api/v1/forge/connectors',
    tag: 'connectors',
    summary: 'Create a forged connector for the caller’s tenant (chairman only)',
    description:
      'The base URL must be an https URL of a public host; names are unique per tenant ignoring case (409). Created active at version 1.',
    document: CreateConnector,
    variables: { input: fromBody() },
    status: 201,
    respond: (data) => data.createConnector,
    headers: (data) => ({ ETag: `"${data.createConnector.version}"` }),
    responseSchema: connectorResponse,
    example: templateExample,
    responseExample: connectorExample,
    responseHeaders: etag,
    errors: { 409: 'The tenant already has a connector of that name (ignoring case).' },
  }),
  defineRoute({
    method: 'GET',
    path: '/api/v1/forge/connectors',
    tag: 'connectors',
    summary: 'List the tenant’s connectors, newest first',
    description: '`limit` 1–100 (default 20); pass `next_cursor` as `cursor` for the next page.',
    document: ListConnectors,
    variables: { first: fromQuery('limit', 'int'), after: fromQuery('cursor') },
    status: 200,
    respond: (data) => data.connectors,
    responseSchema: responseSchemaOf(ListConnectors, { data: z.array(connectorResponse) }),
    responseExample: { data: [connectorExample], next_cursor: null },
  }),
  defineRoute({
    method: 'GET',
    path: '/api/v1/forge/connectors/{id}',
    tag: 'connectors',
    summary: 'Read one connector',
    document: ReadConnector,
    variables: { id: fromPath('id') },
    status: 200,
    respond: (data) => data.connector,
    headers: (data) => ({ ETag: `"${data.connector.version}"` }),
    responseSchema: connectorResponse,
    responseExample: connectorExample,
    responseHeaders: etag,
    errors: { 404: 'No connector of the caller’s tenant has this id.' },
  }),
  defineRoute({
    method: 'PUT',
    path: '/api/v1/forge/connectors/{id}',
    tag: 'connectors',
    summary: 'Replace a connector’s template as its next version (operator or chairman)',
    description:
      'Same body as create. With `If-Match: <version>` the edit is refused with 412 unless that is the current version. A `base_url` on another origin (scheme, host or port) is the chairman’s to set (403 otherwise, audited); it leaves the stored credential unusable until it is set again.',
    document: UpdateConnector,
    variables: { id: fromPath('id'), input: fromBody(), expectedVersion: fromHeader('if-match', 'int') },
    status: 200,
    respond: (data) => data.updateConnector,
    headers: (data) => ({ ETag: `"${data.updateConnector.version}"` }),
    responseSchema: connectorResponse,
    example: templateExample,
    responseExample: { ...connectorExample, version: 2, updated_at: '2026-11-22T10:05:00.000Z' },
    responseHeaders: etag,
    errors: {
      404: 'No connector of the caller’s tenant has this id.',
      409: 'Another connector of the tenant has that name (ignoring case).',
      412: '`If-Match` names a version that is no longer the current one.',
    },
  }),
  defineRoute({
    method: 'GET',
    path: '/api/v1/forge/connectors/{id}/credential',
    tag: 'connectors',
    summary:
      'Show whether a connector has a stored secret: its fingerprint, when it was set and the origin it is bound to, never the secret',
    description:
      'The secret is sent only to `origin`, the origin of `base_url` when it was set. After the chairman moves `base_url` to another origin, `usable` is false and `unusable_reason` says why (calls answer 409) until the secret is set again.',
    document: ReadConnectorCredential,
    variables: { id: fromPath('id') },
    status: 200,
    respond: (data) => data.connector,
    responseSchema: credentialResponse,
    responseExample: credentialExample,
    errors: credentialErrors,
  }),
  defineRoute({
    method: 'PUT',
    path: '/api/v1/forge/connectors/{id}/credential',
    tag: 'connectors',
    summary: 'Set or rotate a connector’s secret, sealed at rest (operator or chairman)',
    description:
      'The body holds exactly one of `api_key` (`key`, and `header` (default `X-API-Key`) or `query_param`), `bearer` (`token`), `basic` (`username`, `password`) or `oauth2_client_credentials` (`token_url`, `client_id`, `client_secret`, `scope`): the one named by the template’s `auth_type` (422 otherwise). Replaces the current secret and binds it to the origin of the current `base_url`. 503 when the service has no `CONNECTOR_SECRETS_KEY`.',
    document: SetConnectorCredential,
    variables: { id: fromPath('id'), input: fromBody() },
    status: 200,
    respond: (data) => data.setConnectorCredential,
    responseSchema: credentialResponse,
    example: { bearer: { token: 'sk_live_…' } },
    responseExample: credentialExample,
    errors: { ...credentialErrors, 503: 'The service has no CONNECTOR_SECRETS_KEY configured.' },
  }),
  defineRoute({
    method: 'DELETE',
    path: '/api/v1/forge/connectors/{id}/credential',
    tag: 'connectors',
    summary: 'Remove a connector’s stored secret, if any (operator or chairman)',
    document: ClearConnectorCredential,
    variables: { id: fromPath('id') },
    status: 200,
    respond: (data) => data.clearConnectorCredential,
    responseSchema: credentialResponse,
    responseExample: { connector_id: credentialExample.connector_id, credential: null },
    errors: credentialErrors,
  }),
  defineRoute({
    method: 'GET',
    path: '/api/v1/forge/connectors/{id}/approval-policy',
    tag: 'connectors',
    summary: 'Read which endpoints of a connector wait for a decision before they are called',
    document: ReadApprovalPolicy,
    variables: { id: fromPath('id') },
    status: 200,
    respond: (data) => data.connector,
    headers: (data) => ({ ETag: `"${data.connector.version}"` }),
    responseSchema: policyResponse,
    responseExample: policyExample,
    responseHeaders: etag,
    errors: { 404: 'No connector of the caller’s tenant has this id.' },
  }),
  defineRoute({
    method: 'PUT',
    path: '/api/v1/forge/connectors/{id}/approval-policy',
    tag: 'connectors',
    summary: 'Set which endpoints of a connector wait for a decision (chairman only)',
    description:
      'Each rule gates the calls of one of its `methods` whose request path, as sent (base_url’s path and the endpoint’s together, normalised), matches `path` (a segment `*` matches any one segment, `**` any number; default `/**`; case, escapes, repeated or trailing slashes and encoded slashes do not matter, and a method override header or `_method` parameter counts as the method it names). `approver_roles`: `chairman` always, `operator` to let operators decide too. `expires_in_seconds`: 60 to 2592000 (default 86400). The template is unchanged; the connector moves to its next version (`If-Match` as for an edit), audited as `connector.approval_policy.set`. Requests still waiting are cancelled (`connector_changed`): a call runs only on the version it was requested against.',
    document: SetApprovalPolicy,
    variables: { id: fromPath('id'), policy: fromBody(), expectedVersion: fromHeader('if-match', 'int') },
    status: 200,
    respond: (data) => data.setConnectorApprovalPolicy,
    headers: (data) => ({ ETag: `"${data.setConnectorApprovalPolicy.version}"` }),
    responseSchema: policyResponse,
    example: {
      rules: [{ methods: ['POST', 'PUT', 'PATCH', 'DELETE'], path: '/**' }],
      approver_roles: ['chairman', 'operator'],
      expires_in_seconds: 86400,
    },
    responseExample: policyExample,
    responseHeaders: etag,
    errors: {
      404: 'No connector of the caller’s tenant has this id.',
      412: '`If-Match` names a version that is no longer the current one.',
    },
  }),
  defineRoute({
    method: 'DELETE',
    path: '/api/v1/forge/connectors/{id}/approval-policy',
    tag: 'connectors',
    summary: 'Remove a connector’s approval policy: no endpoint waits any more (chairman only)',
    description: 'The connector moves to its next version; requests already waiting can still be decided.',
    document: ClearApprovalPolicy,
    variables: { id: fromPath('id'), expectedVersion: fromHeader('if-match', 'int') },
    status: 200,
    respond: (data) => data.setConnectorApprovalPolicy,
    headers: (data) => ({ ETag: `"${data.setConnectorApprovalPolicy.version}"` }),
    responseSchema: policyResponse,
    responseExample: { ...policyExample, version: 3, approval_policy: null },
    responseHeaders: etag,
    errors: {
      404: 'No connector of the caller’s tenant has this id.',
      412: '`If-Match` names a version that is no longer the current one.',
    },
  }),
  defineRoute({
    method: 'POST',
    path: '/api/v1/forge/connectors/{id}/invoke',
    tag: 'connectors',
    summary: 'Call one endpoint of a connector (operator or agent)',
    description:
      'The request is built from the stored template: base_url + the endpoint’s path, with `input.query` and ' +
      '`input.body` checked against its `query_params` and `body_schema` (422 at the exact place otherwise), ' +
      'and sent through the egress guard. A status of 400 or more from the server is a 200 here, with that ' +
      '`status`. Every call is audited (`connector.invoke`) and emits CONNECTOR_INVOKED. 429 when the tenant ' +
      'already has `CONNECTOR_CALLS_PER_TENANT` calls in flight on the instance, or the template’s `rate_limits` ' +
      'are spent.',
    document: InvokeConnector,
    variables: { id: fromPath('id'), endpoint: fromBody('endpoint'), input: fromBody('input') },
    status: 200,
    respond: ({ invokeConnector: { __typename, ...invocation } }) => invocation,
    alternative: {
      status: 202,
      when: (data) => data.invokeConnector.__typename === 'ConnectorCallApproval',
      respond: ({ invokeConnector }) => {
        if (invokeConnector.__typename !== 'ConnectorCallApproval') return invokeConnector;
        const { __typename, approval_status, ...approval } = invokeConnector;
        return { ...approval, status: approval_status };
      },
      description:
        'The connector’s approval policy gates this endpoint: the call is kept (its input sealed) for a decision and nothing was sent. Follow it at `GET /api/v1/forge/approvals/{id}`; once approved, its result is there.',
      responseSchema: pendingResponse,
      responseExample: pendingExample,
    },
    responseSchema: invocationResponse,
    example: {
      endpoint: { method: 'GET', path: '/customers' },
      input: { query: { limit: 10 }, headers: { 'x-trace': 'abc' } },
    },
    responseExample: {
      connector_id: '0b8e9f4c-5a1d-4c2e-8f3b-7d6a5e4c3b2a',
      method: 'GET',
      path: '/customers',
      status: 200,
      headers: { 'content-type': 'application/json' },
      body: [{ id: 'cus_1' }],
      bytes: 16,
      duration_ms: 84,
      redirects: 0,
      response_validation: { valid: true, errors: [] },
    },
    errors: callErrors,
  }),
  defineRoute({
    method: 'POST',
    path: '/api/v1/forge/connectors/{id}/test',
    tag: 'connectors',
    summary: 'Probe a connector with a HEAD request to its base_url (operator or agent)',
    description:
      'Any HTTP answer is a 200 here with the server’s `status`; audited as `connector.test` and emits CONNECTOR_INVOKED.',
    document: TestConnector,
    variables: { id: fromPath('id') },
    status: 200,
    respond: (data) => data.testConnector,
    responseSchema: responseSchemaOf(TestConnector, { connector_id: 'uuid', method: z.literal('HEAD') }),
    responseExample: {
      connector_id: '0b8e9f4c-5a1d-4c2e-8f3b-7d6a5e4c3b2a',
      method: 'HEAD',
      url: 'https://api.stripe.com/v1',
      status: 200,
      duration_ms: 61,
    },
    errors: callErrors,
  }),
];
