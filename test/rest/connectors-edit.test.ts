import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import type { Caller, TestApp } from '../support/app.js';
import { withTestAppAndCaller } from '../support/fixtures.js';
import { createConnector, storedRows, template } from './connectors-support.js';

let t: TestApp;
let chairman: Caller;

withTestAppAndCaller(['chairman'], (made) => ({ t, caller: chairman } = made));

describe('PUT /api/v1/forge/connectors/{id}', () => {
  it('replaces the template as version 2 for an operator', async () => {
    const created = await createConnector(t, chairman, 'Editable');
    const operator = await t.caller(['operator'], { tenantId: chairman.tenantId });
    const edited = template('Editable', {
      auth_type: 'api_key',
      endpoints: [{ method: 'DELETE', path: '/customers/{id}' }],
    });
    const response = await t.rest('PUT', `/api/v1/forge/connectors/${created.id}`, {
      caller: operator,
      body: { template: edited },
    });
    expect(response.status).toBe(200);
    expect(response.body).toEqual({
      ...created,
      template: edited,
      version: 2,
      updated_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
    });
  });

  it('keeps every version and writes a connector.update audit row', async () => {
    const caller = await t.caller(['chairman']);
    const created = await createConnector(t, caller, 'History');
    await t.rest('PUT', `/api/v1/forge/connectors/${created.id}`, {
      caller,
      body: { template: template('History v2') },
    });
    const versions = await t.db.prisma.connectorVersion.findMany({
      where: { connectorId: created.id },
      orderBy: { version: 'asc' },
    });
    expect(versions.map((version) => [version.version, (version.template as { name: string }).name])).toEqual(
      [
        [1, 'History'],
        [2, 'History v2'],
      ],
    );
    const audit = await t.db.prisma.auditEntry.findFirst({
      where: { tenantId: caller.tenantId, action: 'connector.update' },
    });
    expect(audit).toEqual(
      expect.objectContaining({
        targetId: created.id,
        outcome: 'updated',
        details: expect.objectContaining({ version: 2, previous_version: 1, previous_name: 'History' }),
      }),
    );
  });

  it('accepts the edit when If-Match names the current version', async () => {
    const created = await createConnector(t, chairman, 'Conditional');
    const response = await t.rest('PUT', `/api/v1/forge/connectors/${created.id}`, {
      caller: chairman,
      body: { template: template('Conditional') },
      headers: { 'If-Match': '1' },
    });
    expect(response.status).toBe(200);
    expect(response.body.version).toBe(2);
  });

  it('sends the version as an ETag and accepts it back as a quoted If-Match', async () => {
    const created = await createConnector(t, chairman, 'Entity tag');
    const read = await t.rest('GET', `/api/v1/forge/connectors/${created.id}`, { caller: chairman });
    expect(read.headers.get('etag')).toBe('"1"');
    const response = await t.rest('PUT', `/api/v1/forge/connectors/${created.id}`, {
      caller: chairman,
      body: { template: template('Entity tag') },
      headers: { 'If-Match': read.headers.get('etag') ?? '' },
    });
    expect(response.status).toBe(200);
    expect(response.headers.get('etag')).toBe('"2"');
  });

  it('answers 412 when If-Match names a version that is no longer current, and stores nothing', async () => {
    const caller = await t.caller(['chairman']);
    const created = await createConnector(t, caller, 'Stale');
    await t.rest('PUT', `/api/v1/forge/connectors/${created.id}`, {
      caller,
      body: { template: template('Stale') },
    });
    const response = await t.rest('PUT', `/api/v1/forge/connectors/${created.id}`, {
      caller,
      body: { template: template('Stale edit') },
      headers: { 'If-Match': '1' },
    });
    expect(response.status).toBe(412);
    expect(response.body).toEqual({
      detail: `Connector ${created.id} is at version 2, not 1; read it again before editing`,
    });
    expect(await storedRows(t, caller.tenantId)).toEqual({ connectors: 1, versions: 2, audits: 2 });
    const current = await t.rest('GET', `/api/v1/forge/connectors/${created.id}`, { caller });
    expect(current.body.template.name).toBe('Stale');
  });

  it('answers 422 at ["header","if-match"] for an If-Match that is not an integer', async () => {
    const created = await createConnector(t, chairman, 'Bad precondition');
    const response = await t.rest('PUT', `/api/v1/forge/connectors/${created.id}`, {
      caller: chairman,
      body: { template: template('Bad precondition') },
      headers: { 'If-Match': 'abc' },
    });
    expect(response.status).toBe(422);
    expect(response.body).toMatchInlineSnapshot(`
      {
        "detail": [
          {
            "input": "abc",
            "loc": [
              "header",
              "if-match",
            ],
            "msg": "Input should be a valid integer, unable to parse string as an integer",
            "type": "int_parsing",
          },
        ],
      }
    `);
  });

  it('gives concurrent edits consecutive versions', async () => {
    const caller = await t.caller(['chairman']);
    const created = await createConnector(t, caller, 'Busy');
    const responses = await Promise.all(
      [1, 2, 3].map(() =>
        t.rest('PUT', `/api/v1/forge/connectors/${created.id}`, {
          caller,
          body: { template: template('Busy') },
        }),
      ),
    );
    expect(responses.map((response) => response.body.version).sort()).toEqual([2, 3, 4]);
  });

  it('lets only one of two concurrent edits with the same If-Match through', async () => {
    const caller = await t.caller(['chairman']);
    const created = await createConnector(t, caller, 'Contended');
    const responses = await Promise.all(
      [1, 2].map(() =>
        t.rest('PUT', `/api/v1/forge/connectors/${created.id}`, {
          caller,
          body: { template: template('Contended') },
          headers: { 'If-Match': '1' },
        }),
      ),
    );
    expect(responses.map((response) => response.status).sort()).toEqual([200, 412]);
  });

  it('renames a connector, also to a different case of its own name', async () => {
    const caller = await t.caller(['chairman']);
    const created = await createConnector(t, caller, 'Rename me');
    const response = await t.rest('PUT', `/api/v1/forge/connectors/${created.id}`, {
      caller,
      body: { template: template('RENAME ME') },
    });
    expect(response.status).toBe(200);
    expect(response.body.template.name).toBe('RENAME ME');
  });

  it('answers 409 when renaming to a name another connector uses, and stores nothing', async () => {
    const caller = await t.caller(['chairman']);
    await createConnector(t, caller, 'Taken');
    const created = await createConnector(t, caller, 'Free');
    const response = await t.rest('PUT', `/api/v1/forge/connectors/${created.id}`, {
      caller,
      body: { template: template('taken') },
    });
    expect(response.status).toBe(409);
    expect(response.body).toEqual({
      detail: "A connector named 'taken' already exists (names are compared ignoring case)",
    });
    expect(await storedRows(t, caller.tenantId)).toEqual({ connectors: 2, versions: 2, audits: 2 });
  });

  it('answers 403 to a member and stores nothing', async () => {
    const caller = await t.caller(['chairman']);
    const created = await createConnector(t, caller, 'Members may not edit');
    const member = await t.caller(['member'], { tenantId: caller.tenantId });
    const response = await t.rest('PUT', `/api/v1/forge/connectors/${created.id}`, {
      caller: member,
      body: { template: template('Edited by a member') },
    });
    expect(response.status).toBe(403);
    expect(await storedRows(t, caller.tenantId)).toEqual({ connectors: 1, versions: 1, audits: 1 });
  });

  it('answers 404 for another tenant’s connector and changes nothing', async () => {
    const caller = await t.caller(['chairman']);
    const created = await createConnector(t, caller, 'Foreign');
    const stranger = await t.caller(['chairman']);
    const response = await t.rest('PUT', `/api/v1/forge/connectors/${created.id}`, {
      caller: stranger,
      body: { template: template('Hijacked') },
    });
    expect(response.status).toBe(404);
    expect(response.body).toEqual({ detail: `Connector ${created.id} not found` });
    expect(await storedRows(t, caller.tenantId)).toEqual({ connectors: 1, versions: 1, audits: 1 });
    expect(await storedRows(t, stranger.tenantId)).toEqual({ connectors: 0, versions: 0, audits: 0 });
  });

  it('answers 422 for an invalid body before looking the connector up', async () => {
    const stranger = await t.caller(['chairman']);
    const response = await t.rest('PUT', `/api/v1/forge/connectors/${randomUUID()}`, {
      caller: stranger,
      body: { template: template('Bad', { base_url: 'https://10.0.0.1' }) },
    });
    expect(response.status).toBe(422);
    expect(response.body.detail).toEqual([
      expect.objectContaining({ loc: ['body', 'template', 'base_url'] }),
    ]);
  });

  it('answers 401 without a token', async () => {
    const response = await t.rest('PUT', `/api/v1/forge/connectors/${randomUUID()}`, {
      body: { template: template('x') },
    });
    expect(response.status).toBe(401);
  });
});
