import { describe, expect, it } from 'vitest';
import { checkRateLimitOrder, toStoredTemplate } from '../../../src/domain/connectors/template.js';

describe('toStoredTemplate', () => {
  it('spells every part in snake_case', () => {
    expect(
      toStoredTemplate({
        name: 'CRM',
        baseUrl: 'https://crm.example.com/api',
        authType: 'basic',
        description: 'Contacts',
        endpoints: [
          {
            method: 'POST',
            path: '/contacts',
            bodySchema: { type: 'object' },
            queryParams: { dry_run: {} },
            responseSchema: { a: 1 },
          },
        ],
        rateLimits: { perMinute: 1, perHour: 2, perDay: 3 },
      }),
    ).toEqual({
      name: 'CRM',
      base_url: 'https://crm.example.com/api',
      auth_type: 'basic',
      description: 'Contacts',
      endpoints: [
        {
          method: 'POST',
          path: '/contacts',
          body_schema: { type: 'object' },
          query_params: { dry_run: {} },
          response_schema: { a: 1 },
        },
      ],
      rate_limits: { per_minute: 1, per_hour: 2, per_day: 3 },
    });
  });

  it('leaves out the optional parts that are null or absent', () => {
    expect(
      toStoredTemplate({
        name: 'CRM',
        baseUrl: 'https://crm.example.com',
        authType: 'none',
        description: null,
        endpoints: [{ method: 'GET', path: '/', bodySchema: null }],
        rateLimits: { perMinute: null, perDay: 9 },
      }),
    ).toEqual({
      name: 'CRM',
      base_url: 'https://crm.example.com',
      auth_type: 'none',
      endpoints: [{ method: 'GET', path: '/' }],
      rate_limits: { per_day: 9 },
    });
  });

  it('keeps an empty endpoint list', () => {
    expect(
      toStoredTemplate({ name: 'x', baseUrl: 'https://a.example', authType: 'none', endpoints: [] })
        .endpoints,
    ).toEqual([]);
  });
});

describe('checkRateLimitOrder', () => {
  it.each([
    [{}],
    [{ perMinute: 5 }],
    [{ perMinute: 5, perHour: 5, perDay: 5 }],
    [{ perMinute: 1, perDay: 2 }],
    [{ perHour: 10, perDay: null }],
  ])('accepts %j', (limits) => {
    expect(checkRateLimitOrder(limits)).toEqual([]);
  });

  it('reports a per_hour below per_minute at per_hour', () => {
    expect(checkRateLimitOrder({ perMinute: 10, perHour: 9 })).toEqual([
      { field: 'perHour', message: 'per_hour (9) must be at least per_minute (10)' },
    ]);
  });

  it('reports a per_day below per_minute at per_day when per_hour is absent', () => {
    expect(checkRateLimitOrder({ perMinute: 10, perDay: 9 })).toEqual([
      { field: 'perDay', message: 'per_day (9) must be at least per_minute (10)' },
    ]);
  });

  it('reports each offending window once', () => {
    expect(
      checkRateLimitOrder({ perMinute: 30, perHour: 20, perDay: 10 }).map((violation) => violation.field),
    ).toEqual(['perHour', 'perDay']);
  });
});
