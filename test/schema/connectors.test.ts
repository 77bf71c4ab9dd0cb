import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import type { ConnectorTemplateInput } from '../../src/generated/graphql/graphql.js';
import { graphql } from '../../src/generated/graphql/index.js';
import { type Caller, createTestApp, type TestApp } from '../support/app.js';
import { AuditLog } from '../support/audit.js';
import { createTestDatabase } from '../support/database.js';
import { withTestAppAndCaller } from '../support/fixtures.js';

const CreateConnectorForTest = graphql(`
  mutation CreateConnectorForTest($input: ConnectorInput!) {
    createConnector(input: $input) {
      id
      tenantId
      name
      status
      template
      version
      createdBy
    }
  }
`);

const UpdateConnectorForTest = graphql(`
  mutation UpdateConnectorForTest($id: ID!, $input: ConnectorInput!, $expectedVersion: Int) {
    updateConnector(id: $id, input: $input, expectedVersion: $expectedVersion) {
      id
      name
      version
      template
    }
  }
`);

const ConnectorWithVersions = graphql(`
  query ConnectorWithVersions($id: ID!) {
    connector(id: $id) {
      id
      name
      version
      template
      createdAt
      updatedAt
      versions {
        version
        template
        createdBy
      }
    }
  }
`);

const ConnectorsPage = graphql(`
  query ConnectorsPage($first: Int, $after: String) {
    connectors(first: $first, after: $after) {
      nodes {
        id
        name
      }
      nextCursor
    }
  }
`);

let t: TestApp;
let chairman: Caller;

withTestAppAndCaller(['chairman'], (made) => ({ t, caller: chairman } = made));

function templateInput(
  name: string,
  overrides: Partial<ConnectorTemplateInput> = {},
): ConnectorTemplateInput {
  return {
    name,
    baseUrl: 'https://api.example.com',
    authType: 'oauth2_client_credentials',
    endpoints: [{ method: 'GET', path: '/invoices', queryParams: { status: { enum: ['open', 'paid'] } } }],
    rateLimits: { perMinute: 5, perDay: 500 },
    ...overrides,
  };
}

async function createConnector(caller: Caller, name: string) {
  const result = await t.graphql(
    CreateConnectorForTest,
    { input: { template: templateInput(name) } },
    caller,
  );
  expect(result.errors).toBeUndefined();
  const connector = result.data?.createConnector;
  if (!connector) throw new Error('createConnector answered no data');
  return connector;
}

describe('createConnector', () => {
  it('stores the camelCase input as the snake_case template REST shows', async () => {
    const connector = await createConnector(chairman, 'Invoices');
    expect(connector).toEqual({
      id: expect.any(String),
      tenantId: chairman.tenantId,
      name: 'Invoices',
      status: 'active',
      version: 1,
      createdBy: chairman.sub,
      template: {
        name: 'Invoices',
        base_url: 'https://api.example.com',
        auth_type: 'oauth2_client_credentials',
        endpoints: [
          { method: 'GET', path: '/invoices', query_params: { status: { enum: ['open', 'paid'] } } },
        ],
        rate_limits: { per_minute: 5, per_day: 500 },
      },
    });
    const rest = await t.rest('GET', `/api/v1/forge/connectors/${connector.id}`, { caller: chairman });
    expect(rest.body.template).toEqual(connector.template);
  });

  it('answers BAD_USER_INPUT located in the GraphQL arguments', async () => {
    const result = await t.graphql(
      CreateConnectorForTest,
      {
        input: { template: templateInput('Bad method', { endpoints: [{ method: 'CONNECT', path: '/x' }] }) },
      },
      chairman,
    );
    expect(result.errors?.[0]?.extensions).toEqual(
      expect.objectContaining({
        code: 'BAD_USER_INPUT',
        detail: [
          expect.objectContaining({ type: 'enum', loc: ['input', 'template', 'endpoints', 0, 'method'] }),
        ],
      }),
    );
  });

  it('refuses a private base URL', async () => {
    const result = await t.graphql(
      CreateConnectorForTest,
      { input: { template: templateInput('Private', { baseUrl: 'https://[::ffff:10.0.0.1]/' }) } },
      chairman,
    );
    expect(result.errors?.[0]?.extensions?.detail).toEqual([
      expect.objectContaining({ type: 'value_error', loc: ['input', 'template', 'baseUrl'] }),
    ]);
  });

  it.each([['operator'], ['member']] as const)('is FORBIDDEN to a %s', async (role) => {
    const caller = await t.caller([role]);
    const result = await t.graphql(
      CreateConnectorForTest,
      { input: { template: templateInput('Nope') } },
      caller,
    );
    expect(result.errors?.[0]?.extensions?.code).toBe('FORBIDDEN');
  });

  it('answers CONFLICT for a name that differs only in case', async () => {
    const caller = await t.caller(['chairman']);
    await createConnector(caller, 'Ledger');
    const result = await t.graphql(
      CreateConnectorForTest,
      { input: { template: templateInput('lEDGER') } },
      caller,
    );
    expect(result.errors?.[0]?.extensions?.code).toBe('CONFLICT');
  });

  it('shows up in the audit log as connector.create', async () => {
    const caller = await t.caller(['chairman']);
    const connector = await createConnector(caller, 'Audit me');
    const result = await t.graphql(AuditLog, { action: 'connector.create' }, caller);
    expect(result.data?.auditLog.nodes).toEqual([
      { action: 'connector.create', targetId: connector.id, outcome: 'created' },
    ]);
  });
});

describe('updateConnector', () => {
  it('keeps every version, readable newest first through Connector.versions', async () => {
    const caller = await t.caller(['chairman']);
    const connector = await createConnector(caller, 'Versioned');
    const operator = await t.caller(['operator'], { tenantId: caller.tenantId });
    const updated = await t.graphql(
      UpdateConnectorForTest,
      {
        id: connector.id,
        input: { template: templateInput('Versioned', { authType: 'basic' }) },
        expectedVersion: 1,
      },
      operator,
    );
    expect(updated.data?.updateConnector).toEqual(expect.objectContaining({ version: 2 }));

    const read = await t.graphql(ConnectorWithVersions, { id: connector.id }, caller);
    const versions = read.data?.connector.versions ?? [];
    expect(
      versions.map((version) => [
        version.version,
        (version.template as { auth_type: string }).auth_type,
        version.createdBy,
      ]),
    ).toEqual([
      [2, 'basic', operator.sub],
      [1, 'oauth2_client_credentials', caller.sub],
    ]);
    expect(read.data?.connector.template).toEqual(versions[0]?.template);
  });

  it('answers PRECONDITION_FAILED for a stale expectedVersion and keeps the template', async () => {
    const caller = await t.caller(['chairman']);
    const connector = await createConnector(caller, 'Guarded');
    const result = await t.graphql(
      UpdateConnectorForTest,
      { id: connector.id, input: { template: templateInput('Guarded v2') }, expectedVersion: 3 },
      caller,
    );
    expect(result.errors?.[0]?.extensions?.code).toBe('PRECONDITION_FAILED');
    const read = await t.graphql(ConnectorWithVersions, { id: connector.id }, caller);
    expect(read.data?.connector).toEqual(expect.objectContaining({ name: 'Guarded', version: 1 }));
    expect(read.data?.connector.versions).toHaveLength(1);
  });

  it('is FORBIDDEN to a member', async () => {
    const connector = await createConnector(chairman, 'Members cannot edit');
    const member = await t.caller(['member'], { tenantId: chairman.tenantId });
    const result = await t.graphql(
      UpdateConnectorForTest,
      { id: connector.id, input: { template: templateInput('x') } },
      member,
    );
    expect(result.errors?.[0]?.extensions?.code).toBe('FORBIDDEN');
  });

  it('answers NOT_FOUND for another tenant’s connector', async () => {
    const connector = await createConnector(chairman, 'Not yours');
    const stranger = await t.caller(['operator']);
    const result = await t.graphql(
      UpdateConnectorForTest,
      { id: connector.id, input: { template: templateInput('Mine') } },
      stranger,
    );
    expect(result.errors?.[0]?.extensions?.code).toBe('NOT_FOUND');
  });
});

describe('connector and connectors', () => {
  it('answers NOT_FOUND when reading another tenant’s connector', async () => {
    const connector = await createConnector(chairman, 'Hidden');
    const stranger = await t.caller(['chairman']);
    const result = await t.graphql(ConnectorWithVersions, { id: connector.id }, stranger);
    expect(result.errors?.[0]?.extensions?.code).toBe('NOT_FOUND');
    expect(result.data).toBeNull();
  });

  it('pages through the tenant’s connectors newest first with first and after', async () => {
    const caller = await t.caller(['chairman']);
    for (const name of ['A', 'B', 'C']) await createConnector(caller, name);
    const first = await t.graphql(ConnectorsPage, { first: 2 }, caller);
    expect(first.data?.connectors.nodes.map((node) => node.name)).toEqual(['C', 'B']);
    const second = await t.graphql(
      ConnectorsPage,
      { first: 2, after: first.data?.connectors.nextCursor },
      caller,
    );
    expect(second.data?.connectors).toEqual({
      nodes: [expect.objectContaining({ name: 'A' })],
      nextCursor: null,
    });
  });
});

describe('persistence', () => {
  it('keeps a created connector, with its versions, for a new app instance over the same database', async () => {
    const database = await createTestDatabase();
    const first = await createTestApp({ database });
    const caller = await first.caller(['chairman']);
    const created = await first.rest('POST', '/api/v1/forge/connectors', {
      caller,
      body: { template: { name: 'Durable', base_url: 'https://api.example.com', auth_type: 'none' } },
    });
    expect(created.status).toBe(201);
    await first.rest('PUT', `/api/v1/forge/connectors/${created.body.id}`, {
      caller,
      body: { template: { name: 'Durable', base_url: 'https://api.example.net', auth_type: 'none' } },
    });
    await first.close();

    const second = await createTestApp({ database });
    try {
      const read = await second.rest('GET', `/api/v1/forge/connectors/${created.body.id}`, { caller });
      expect(read.status).toBe(200);
      expect(read.body).toEqual(
        expect.objectContaining({ id: created.body.id, version: 2, created_at: created.body.created_at }),
      );
      expect(read.body.template.base_url).toBe('https://api.example.net');
      const history = await second.graphql(ConnectorWithVersions, { id: created.body.id }, caller);
      expect(history.data?.connector.versions.map((version) => version.version)).toEqual([2, 1]);
      const duplicate = await second.rest('POST', '/api/v1/forge/connectors', {
        caller,
        body: { template: { name: 'DURABLE', base_url: 'https://api.example.com', auth_type: 'none' } },
      });
      expect(duplicate.status).toBe(409);
    } finally {
      await second.close();
      await database.drop();
    }
  });

  it('reads nothing for a random id', async () => {
    const result = await t.graphql(ConnectorWithVersions, { id: randomUUID() }, chairman);
    expect(result.errors?.[0]?.extensions?.code).toBe('NOT_FOUND');
  });
});
