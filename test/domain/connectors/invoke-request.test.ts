import { describe, expect, it } from 'vitest';
import { buildRequest, findEndpoint } from '../../../src/domain/connectors/invoke-request.js';
import type { StoredConnectorTemplate } from '../../../src/domain/connectors/template.js';
import { DomainError } from '../../../src/domain/errors.js';

const template: StoredConnectorTemplate = {
  name: 'Orders',
  base_url: 'https://api.example.com/v2/',
  auth_type: 'none',
  endpoints: [
    {
      method: 'GET',
      path: '/orders?state=open',
      query_params: { tag: { type: 'array', items: { type: 'string' } } },
    },
    {
      method: 'GET',
      path: '/search',
      query_params: { type: 'object', properties: { q: { type: 'string', minLength: 2 } }, required: ['q'] },
    },
    { method: 'POST', path: '/notes' },
    { method: 'PUT', path: '/broken', body_schema: { type: 'nonsense' } },
  ],
};

function endpoint(method: string, path: string) {
  return findEndpoint(template, { method: method as 'GET', path });
}

function detailOf(run: () => unknown) {
  try {
    run();
  } catch (error) {
    // A domain refusal: its code and facts (GraphQL's `extensions` are made of them in src/errors.ts).
    expect(error).toBeInstanceOf(DomainError);
    return { code: (error as DomainError).code, ...(error as DomainError).facts() };
  }
  throw new Error('expected a refusal');
}

describe('buildRequest', () => {
  it('joins base_url and path once, keeps the path’s own query and repeats list parameters', () => {
    const built = buildRequest(template, endpoint('GET', '/orders?state=open'), {
      query: { tag: ['a', 'b c'] },
    });
    expect(built.url).toBe('https://api.example.com/v2/orders?state=open&tag=a&tag=b+c');
    expect(built.body).toBeUndefined();
  });

  it('reads query_params written as a whole object schema, required parameters included', () => {
    expect(buildRequest(template, endpoint('GET', '/search'), { query: { q: 'ada' } }).url).toBe(
      'https://api.example.com/v2/search?q=ada',
    );
    expect(detailOf(() => buildRequest(template, endpoint('GET', '/search'), {}))).toMatchObject({
      code: 'BAD_USER_INPUT',
      detail: [{ type: 'missing', loc: ['input', 'query', 'q'] }],
    });
  });

  it('refuses every query parameter of an endpoint without query_params', () => {
    expect(
      detailOf(() => buildRequest(template, endpoint('POST', '/notes'), { query: { a: 1 } })),
    ).toMatchObject({
      detail: [{ type: 'extra_forbidden', loc: ['input', 'query', 'a'], input: 1 }],
    });
  });

  it('sends any JSON body to an endpoint without body_schema', () => {
    expect(buildRequest(template, endpoint('POST', '/notes'), { body: [1, 'two'] }).body).toBe('[1,"two"]');
  });

  it('answers 400 BAD_REQUEST when the template’s schema cannot be compiled', () => {
    expect(detailOf(() => buildRequest(template, endpoint('PUT', '/broken'), { body: {} }))).toMatchObject({
      code: 'BAD_REQUEST',
    });
  });

  it('finds endpoints by exact method and path only', () => {
    expect(detailOf(() => findEndpoint(template, { method: 'GET', path: '/orders' }))).toMatchObject({
      detail: [{ type: 'value_error', loc: ['endpoint'] }],
    });
  });
});
