import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Caller, createTestApp, type TestApp } from '../support/app.js';
import type { TestHttpsServer } from '../support/https-server.js';
import {
  UPSTREAM_HOST as HOST,
  operatedConnector,
  refused,
  startUpstream,
  storedRows,
  withTemplate,
} from './connectors-support.js';

/** Catastrophic for a backtracking engine: every split of the a's is tried before the `!` fails it. */
const NESTED = '^(a+)+$';
// 34 a's hold a backtracking engine for minutes (twice as long for each more: 25 take 0.3 s), a linear
// one for microseconds. Before, the test's own timeout failed it once the event loop came back.
const HOSTILE = `${'a'.repeat(34)}!`;

let server: TestHttpsServer;
let t: TestApp;

beforeAll(async () => {
  const upstream = await startUpstream();
  ({ server } = upstream);
  t = await createTestApp({ env: upstream.allow, egress: upstream.egress });
  server.route('/v1/echo', (_request, body, response) => {
    response.writeHead(200, { 'content-type': 'application/json' }).end(body || '{}');
  });
  server.route('/v1/names', (_request, _body, response) => {
    response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ name: HOSTILE }));
  });
});
afterAll(async () => {
  await t?.close();
  await server?.close();
});

const endpoint = (field: string, schema: unknown, method = 'POST') => ({
  endpoints: [{ method, path: '/people', [field]: schema }],
});

describe('patterns the linear-time engine cannot evaluate, at save time', () => {
  it.each([
    ['a backreference', '^(a)\\1$', '\\1 is a backreference'],
    ['a named backreference', '^(?<x>a)\\k<x>$', '\\k is a backreference'],
    ['a lookahead', '^(?=a)a$', 'invalid or unsupported Perl syntax: `(?=`'],
    ['a negative lookahead', '^(?!a)b$', 'invalid or unsupported Perl syntax: `(?!`'],
    ['a lookbehind', '(?<=a)b', 'invalid named capture: `(?<=a)b`'],
  ])('refuses %s in body_schema with 422 at the pattern, and stores nothing', async (_what, pattern, why) => {
    const detail = await refused(
      t,
      withTemplate(
        endpoint('body_schema', {
          type: 'object',
          properties: { name: { type: 'string', pattern } },
        }),
      ),
    );
    expect(detail).toEqual([
      {
        type: 'value_error',
        loc: ['body', 'template', 'endpoints', 0, 'body_schema', 'properties', 'name', 'pattern'],
        msg: `Value error, the pattern cannot be evaluated in linear time (backreferences and lookaround are not supported): ${why}`,
        input: pattern,
        ctx: { error: expect.any(String) },
      },
    ]);
  });

  it('refuses an unevaluable patternProperties key in response_schema, at that key', async () => {
    const detail = await refused(
      t,
      withTemplate(
        endpoint('response_schema', { patternProperties: { '^(?!id)': { type: 'string' } } }, 'GET'),
      ),
    );
    expect(detail).toEqual([
      expect.objectContaining({
        type: 'value_error',
        loc: ['body', 'template', 'endpoints', 0, 'response_schema', 'patternProperties', '^(?!id)'],
        input: '^(?!id)',
      }),
    ]);
  });

  it('refuses a pattern in query_params written as name → schema, at the parameter', async () => {
    const detail = await refused(
      t,
      withTemplate(endpoint('query_params', { code: { type: 'string', pattern: '(x)\\1' } }, 'GET')),
    );
    expect(detail.map((item) => item.loc)).toEqual([
      ['body', 'template', 'endpoints', 0, 'query_params', 'code', 'pattern'],
    ]);
  });

  it('finds patterns under items, allOf, definitions and not, and nowhere a schema holds data', async () => {
    const detail = await refused(
      t,
      withTemplate(
        endpoint('body_schema', {
          definitions: { code: { pattern: '(?=a)' } },
          items: [{ pattern: '(?=b)' }],
          allOf: [{ not: { pattern: '(?=c)' } }],
          const: { pattern: '(?=not-a-schema)' },
          properties: { pattern: { enum: ['(?=data)'] } },
        }),
      ),
    );
    expect(detail.map((item) => item.loc.slice(5))).toEqual([
      ['allOf', 0, 'not', 'pattern'],
      ['definitions', 'code', 'pattern'],
      ['items', 0, 'pattern'],
    ]);
  });

  it('refuses a pattern that is not a regular expression at all', async () => {
    const detail = await refused(t, withTemplate(endpoint('body_schema', { pattern: '(' })));
    expect(detail).toEqual([
      expect.objectContaining({
        loc: ['body', 'template', 'endpoints', 0, 'body_schema', 'pattern'],
        msg: expect.stringMatching(/^Value error, the pattern is not a valid regular expression: /),
      }),
    ]);
  });

  it('refuses the same on an edit (PUT), and leaves the connector as it was', async () => {
    const chairman: Caller = await t.caller(['chairman']);
    const created = await t.rest('POST', '/api/v1/forge/connectors', {
      caller: chairman,
      body: withTemplate({}),
    });
    expect(created.status).toBe(201);
    const before = await storedRows(t, chairman.tenantId);
    const response = await t.rest('PUT', `/api/v1/forge/connectors/${created.body.id}`, {
      caller: chairman,
      body: withTemplate(endpoint('body_schema', { pattern: '\\k<x>(?<x>a)' })),
    });
    expect(response.status).toBe(422);
    expect(response.body.detail[0].loc).toEqual([
      'body',
      'template',
      'endpoints',
      0,
      'body_schema',
      'pattern',
    ]);
    expect(await storedRows(t, chairman.tenantId)).toEqual(before);
  });

  it('accepts a nested quantifier: the linear-time engine evaluates it', async () => {
    const chairman = await t.caller(['chairman']);
    const created = await t.rest('POST', '/api/v1/forge/connectors', {
      caller: chairman,
      body: withTemplate(endpoint('body_schema', { properties: { name: { pattern: NESTED } } })),
    });
    expect(created.status).toBe(201);
  });
});

describe('patterns at call time', () => {
  const connector = (endpoints: unknown[]) =>
    operatedConnector(t, {
      name: 'Patterns',
      base_url: `https://${HOST}:${server.port}/v1`,
      auth_type: 'none',
      endpoints,
    });

  it('answers a hostile body checked against ^(a+)+$ with 422 at its place, and sends nothing', async () => {
    const { operator, id } = await connector([
      {
        method: 'POST',
        path: '/echo',
        body_schema: { type: 'object', properties: { name: { type: 'string', pattern: NESTED } } },
      },
    ]);
    const before = server.received.length;
    const response = await t.rest('POST', `/api/v1/forge/connectors/${id}/invoke`, {
      caller: operator,
      body: { endpoint: { method: 'POST', path: '/echo' }, input: { body: { name: HOSTILE } } },
    });
    expect(response.status).toBe(422);
    expect(response.body.detail).toEqual([
      {
        type: 'value_error',
        loc: ['body', 'input', 'body', 'name'],
        msg: `Value error, must match pattern "${NESTED}"`,
        input: HOSTILE,
        ctx: { error: `must match pattern "${NESTED}"` },
      },
    ]);
    expect(server.received.length).toBe(before);
    const accepted = await t.rest('POST', `/api/v1/forge/connectors/${id}/invoke`, {
      caller: operator,
      body: { endpoint: { method: 'POST', path: '/echo' }, input: { body: { name: 'a'.repeat(100_000) } } },
    });
    expect(accepted.status).toBe(200);
  });

  it('reports an upstream body that does not match ^(a+)+$ in response_validation', async () => {
    const { operator, id } = await connector([
      {
        method: 'GET',
        path: '/names',
        response_schema: { type: 'object', properties: { name: { pattern: NESTED } } },
      },
    ]);
    const response = await t.rest('POST', `/api/v1/forge/connectors/${id}/invoke`, {
      caller: operator,
      body: { endpoint: { method: 'GET', path: '/names' } },
    });
    expect(response.status).toBe(200);
    expect(response.body.response_validation).toEqual({
      valid: false,
      errors: [{ path: '/name', message: `must match pattern "${NESTED}"` }],
    });
  });
});
