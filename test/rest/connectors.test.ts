import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { type Caller, notAUuidAtPath, type TestApp } from '../support/app.js';
import { withTestAppAndCaller } from '../support/fixtures.js';
import { createConnector, storedRows, template } from './connectors-support.js';

let t: TestApp;
let chairman: Caller;

withTestAppAndCaller(['chairman'], (made) => ({ t, caller: chairman } = made));

describe('POST /api/v1/forge/connectors', () => {
  it('creates an active connector at version 1 and answers 201 with the Connector', async () => {
    const response = await t.rest('POST', '/api/v1/forge/connectors', {
      caller: chairman,
      body: { template: template('Customers API') },
    });
    expect(response.status).toBe(201);
    expect(response.body).toEqual({
      id: expect.stringMatching(/^[0-9a-f-]{36}$/),
      tenant_id: chairman.tenantId,
      status: 'active',
      template: template('Customers API'),
      version: 1,
      created_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
      updated_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
    });
  });

  it('stamps a new connector created and updated at the same instant', async () => {
    const created = await createConnector(t, chairman, 'Stamped');
    expect(created.created_at).toBe(created.updated_at);
  });

  it('stores only the template parts that were given, in snake_case', async () => {
    const caller = await t.caller(['chairman']);
    const response = await t.rest('POST', '/api/v1/forge/connectors', {
      caller,
      body: {
        template: {
          name: 'Minimal',
          base_url: 'https://api.example.org',
          auth_type: 'none',
          rate_limits: { per_hour: 5 },
        },
      },
    });
    expect(response.status).toBe(201);
    expect(response.body.template).toEqual({
      name: 'Minimal',
      base_url: 'https://api.example.org',
      auth_type: 'none',
      rate_limits: { per_hour: 5 },
    });
  });

  it('ignores unknown fields in the body and in the template', async () => {
    const caller = await t.caller(['chairman']);
    const response = await t.rest('POST', '/api/v1/forge/connectors', {
      caller,
      body: { template: { ...template('Extra'), status: 'disabled', secret: 'x' }, version: 7 },
    });
    expect(response.status).toBe(201);
    expect(response.body.status).toBe('active');
    expect(response.body.version).toBe(1);
    expect(response.body.template).toEqual(template('Extra'));
  });

  it('writes a version row and a connector.create audit row', async () => {
    const caller = await t.caller(['chairman']);
    const created = await createConnector(t, caller, 'Audited');
    const versions = await t.db.prisma.connectorVersion.findMany({ where: { connectorId: created.id } });
    expect(versions).toEqual([
      expect.objectContaining({ version: 1, template: template('Audited'), createdBy: caller.sub }),
    ]);
    const audits = await t.db.prisma.auditEntry.findMany({ where: { tenantId: caller.tenantId } });
    expect(audits).toEqual([
      expect.objectContaining({
        action: 'connector.create',
        targetType: 'connector',
        targetId: created.id,
        outcome: 'created',
        actor: caller.sub,
      }),
    ]);
  });

  it('answers 401 with WWW-Authenticate without a token', async () => {
    const response = await t.rest('POST', '/api/v1/forge/connectors', {
      body: { template: template('Anonymous') },
    });
    expect(response.status).toBe(401);
    expect(response.headers.get('www-authenticate')).toBe('Bearer');
    expect(response.body).toEqual({ detail: 'Not authenticated' });
  });

  it.each([['operator'], ['member'], ['agent']] as const)(
    'answers 403 to a %s and stores nothing',
    async (role) => {
      const caller = await t.caller([role]);
      const response = await t.rest('POST', '/api/v1/forge/connectors', {
        caller,
        body: { template: template('Not mine') },
      });
      expect(response.status).toBe(403);
      expect(response.body).toEqual({ detail: 'Not allowed for your role' });
      expect(await storedRows(t, caller.tenantId)).toEqual({ connectors: 0, versions: 0, audits: 0 });
    },
  );

  it('answers 403 before looking at an invalid body', async () => {
    const operator = await t.caller(['operator']);
    const response = await t.rest('POST', '/api/v1/forge/connectors', { caller: operator, body: {} });
    expect(response.status).toBe(403);
  });

  it('answers 409 for a name the tenant already uses and stores nothing more', async () => {
    const caller = await t.caller(['chairman']);
    await createConnector(t, caller, 'Billing');
    const response = await t.rest('POST', '/api/v1/forge/connectors', {
      caller,
      body: { template: template('Billing') },
    });
    expect(response.status).toBe(409);
    expect(response.body).toMatchInlineSnapshot(`
      {
        "detail": "A connector named 'Billing' already exists (names are compared ignoring case)",
      }
    `);
    expect(await storedRows(t, caller.tenantId)).toEqual({ connectors: 1, versions: 1, audits: 1 });
  });

  it('answers 409 for a name that differs only in case', async () => {
    const caller = await t.caller(['chairman']);
    await createConnector(t, caller, 'Billing');
    const response = await t.rest('POST', '/api/v1/forge/connectors', {
      caller,
      body: { template: template('BILLING') },
    });
    expect(response.status).toBe(409);
    expect(await storedRows(t, caller.tenantId)).toEqual({ connectors: 1, versions: 1, audits: 1 });
  });

  it('answers 409 for a name that differs only in compatibility forms and surrounding spaces', async () => {
    const caller = await t.caller(['chairman']);
    await createConnector(t, caller, 'Billing');
    const response = await t.rest('POST', '/api/v1/forge/connectors', {
      caller,
      body: { template: template(' Ｂｉｌｌｉｎｇ ') },
    });
    expect(response.status).toBe(409);
  });

  it('lets two tenants use the same name', async () => {
    const first = await t.caller(['chairman']);
    const second = await t.caller(['chairman']);
    await createConnector(t, first, 'Shared name');
    await createConnector(t, second, 'Shared name');
  });

  it('answers 409 to one of two concurrent creates with the same name', async () => {
    const caller = await t.caller(['chairman']);
    const responses = await Promise.all(
      ['Racer', 'racer'].map((name) =>
        t.rest('POST', '/api/v1/forge/connectors', { caller, body: { template: template(name) } }),
      ),
    );
    expect(responses.map((response) => response.status).sort()).toEqual([201, 409]);
    expect(await storedRows(t, caller.tenantId)).toEqual({ connectors: 1, versions: 1, audits: 1 });
  });
});

describe('GET /api/v1/forge/connectors/{id}', () => {
  it('reads a connector of the caller’s tenant, for any role', async () => {
    const created = await createConnector(t, chairman, 'Readable');
    const member = await t.caller(['member'], { tenantId: chairman.tenantId });
    const response = await t.rest('GET', `/api/v1/forge/connectors/${created.id}`, { caller: member });
    expect(response.status).toBe(200);
    expect(response.body).toEqual(created);
  });

  it('answers 404 for another tenant’s connector', async () => {
    const created = await createConnector(t, chairman, 'Private to one tenant');
    const stranger = await t.caller(['chairman']);
    const response = await t.rest('GET', `/api/v1/forge/connectors/${created.id}`, { caller: stranger });
    expect(response.status).toBe(404);
    expect(response.body).toEqual({ detail: `Connector ${created.id} not found` });
  });

  it('answers 404 for an unknown id', async () => {
    const id = randomUUID();
    const response = await t.rest('GET', `/api/v1/forge/connectors/${id}`, { caller: chairman });
    expect(response.status).toBe(404);
  });

  it('answers 422 at ["path","id"] for an id that is not a uuid', async () => {
    const response = await t.rest('GET', '/api/v1/forge/connectors/not-a-uuid', { caller: chairman });
    expect(response.status).toBe(422);
    expect(response.body).toEqual(notAUuidAtPath('id'));
  });

  it('answers 401 without a token', async () => {
    const response = await t.rest('GET', `/api/v1/forge/connectors/${randomUUID()}`);
    expect(response.status).toBe(401);
  });
});

describe('GET /api/v1/forge/connectors', () => {
  it('lists the tenant’s connectors newest first, page by page', async () => {
    const caller = await t.caller(['chairman']);
    const ids: string[] = [];
    for (const name of ['One', 'Two', 'Three']) ids.push((await createConnector(t, caller, name)).id);
    await createConnector(t, await t.caller(['chairman']), 'Other tenant');

    const first = await t.rest('GET', '/api/v1/forge/connectors?limit=2', { caller });
    expect(first.status).toBe(200);
    expect(first.body.data.map((connector: { id: string }) => connector.id)).toEqual([ids[2], ids[1]]);
    expect(first.body.next_cursor).toEqual(expect.any(String));
    expect(first.body.data[0]).toEqual(
      expect.objectContaining({ tenant_id: caller.tenantId, status: 'active', version: 1 }),
    );

    const second = await t.rest('GET', `/api/v1/forge/connectors?limit=2&cursor=${first.body.next_cursor}`, {
      caller,
    });
    expect(second.status).toBe(200);
    expect(second.body).toEqual({ data: [expect.objectContaining({ id: ids[0] })], next_cursor: null });
  });

  it('answers an empty list for a tenant without connectors', async () => {
    const caller = await t.caller(['member']);
    const response = await t.rest('GET', '/api/v1/forge/connectors', { caller });
    expect(response.status).toBe(200);
    expect(response.body).toEqual({ data: [], next_cursor: null });
  });

  it('answers 422 at ["query","limit"] for a limit that is not an integer', async () => {
    const response = await t.rest('GET', '/api/v1/forge/connectors?limit=ten', { caller: chairman });
    expect(response.status).toBe(422);
    expect(response.body).toMatchInlineSnapshot(`
      {
        "detail": [
          {
            "input": "ten",
            "loc": [
              "query",
              "limit",
            ],
            "msg": "Input should be a valid integer, unable to parse string as an integer",
            "type": "int_parsing",
          },
        ],
      }
    `);
  });

  it.each([
    ['0', 'greater_than_equal'],
    ['101', 'less_than_equal'],
  ])('answers 422 at ["query","limit"] for limit=%s', async (limit, type) => {
    const response = await t.rest('GET', `/api/v1/forge/connectors?limit=${limit}`, { caller: chairman });
    expect(response.status).toBe(422);
    expect(response.body.detail).toEqual([
      expect.objectContaining({ type, loc: ['query', 'limit'], input: Number(limit) }),
    ]);
  });

  it('answers 422 at ["query","cursor"] for a cursor it did not issue', async () => {
    const response = await t.rest('GET', '/api/v1/forge/connectors?cursor=garbage', { caller: chairman });
    expect(response.status).toBe(422);
    expect(response.body.detail).toEqual([
      expect.objectContaining({ type: 'value_error', loc: ['query', 'cursor'] }),
    ]);
  });

  it('answers 401 without a token', async () => {
    const response = await t.rest('GET', '/api/v1/forge/connectors');
    expect(response.status).toBe(401);
  });
});

describe('OpenAPI document', () => {
  it('documents the four connector routes', async () => {
    const response = await t.rest('GET', '/api/v1/openapi.json');
    expect(Object.keys(response.body.paths['/api/v1/forge/connectors']).sort()).toEqual(['get', 'post']);
    expect(Object.keys(response.body.paths['/api/v1/forge/connectors/{id}']).sort()).toEqual(['get', 'put']);
  });
});
