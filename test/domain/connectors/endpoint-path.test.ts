import { describe, expect, it } from 'vitest';
import {
  CONNECTOR_AUTH_TYPES,
  CONNECTOR_HTTP_METHODS,
  checkEndpointPath,
  ENDPOINT_PATH_MAX_LENGTH,
} from '../../../src/domain/connectors/endpoint-path.js';

describe('CONNECTOR_HTTP_METHODS', () => {
  it('lists exactly the upper-case methods a connector endpoint may use', () => {
    expect(CONNECTOR_HTTP_METHODS).toEqual(['GET', 'POST', 'PUT', 'PATCH', 'DELETE']);
  });
});

describe('CONNECTOR_AUTH_TYPES', () => {
  it('lists exactly the supported connector authentication schemes', () => {
    expect(CONNECTOR_AUTH_TYPES).toEqual(['none', 'api_key', 'bearer', 'basic', 'oauth2_client_credentials']);
  });
});

describe('checkEndpointPath', () => {
  it.each([
    '/',
    '/items',
    '/v1/items/{id}',
    '/items/',
    '/search?q=boardroom&limit=10',
    '/files/report.v2.json',
    '/a/./b',
    '/..well-known',
    '/items/...',
    '/caf%C3%A9',
    '/café',
    '/a%20b',
    '/redirect?to=example.com/path',
    `/${'a'.repeat(ENDPOINT_PATH_MAX_LENGTH - 1)}`,
  ])('accepts %j', (path) => {
    expect(checkEndpointPath(path)).toBeNull();
  });

  it.each<[string, RegExp]>([
    ['', /empty/],
    ['items', /start with \//],
    ['https://evil.example/items', /start with \//],
    [' /items', /start with \//],
    [`/${'a'.repeat(ENDPOINT_PATH_MAX_LENGTH)}`, /at most 2048/],
    ['/..', /\.\. segments/],
    ['/../admin', /\.\. segments/],
    ['/items/../../admin', /\.\. segments/],
    ['/items/..', /\.\. segments/],
    ['/items/..?x=1', /\.\. segments/],
    ['/items/..#top', /\.\. segments/],
    ['/items/..;/admin', /\.\. segments/],
    ['/%2e%2e/admin', /\.\. segments/],
    ['/%2E%2E/admin', /\.\. segments/],
    ['/.%2e/admin', /\.\. segments/],
    ['/%2e./admin', /\.\. segments/],
    ['/%252e%252e/admin', /\.\. segments/],
    ['/items%2f..%2fadmin', /\.\. segments/],
    ['/items/．．/admin', /\.\. segments/],
    ['/items\\..\\admin', /backslash/],
    ['/items\\admin', /backslash/],
    ['/items%5cadmin', /backslash/],
    ['/items%255cadmin', /backslash/],
    ['/items\u0000', /control/],
    ['/items\r\nHost: evil.example', /control/],
    ['/items\t', /control/],
    ['/items\u007f', /control/],
    ['/items\u0085', /control/],
    ['/items%00', /control/],
    ['/items%0d%0aHost:%20evil.example', /control/],
    ['/items%250a', /control/],
    ['//evil.example/items', /start with \/\//],
    ['/%2fevil.example/items', /start with \/\//],
    ['/redirect?to=https://evil.example', /scheme/],
    ['/proxy/http://169.254.169.254/', /scheme/],
    ['/proxy/http%3a%2f%2f169.254.169.254/', /scheme/],
  ])('refuses %j', (path, reason) => {
    expect(checkEndpointPath(path)).toMatch(reason);
  });
});
