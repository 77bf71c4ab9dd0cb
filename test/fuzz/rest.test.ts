import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ArgSource, Route } from '../../rest/route.js';
import { routes } from '../../rest/routes.js';
import { createTestApp, type TestApp } from '../support/app.js';
import {
  createTestCertificate,
  fixedLookup,
  startHttpsServer,
  type TestHttpsServer,
} from '../support/https-server.js';
import { type SeededTenant, seedTenant } from '../support/seed.js';
import {
  bodies,
  hostileCursor,
  hostileNumber,
  hostileSegment,
  hostileString,
  toJsonText,
} from './arbitraries.js';
import { assertProperty, expectSafeAnswer, FUZZ_SECRETS_KEY, fuzzTimeout, sendRest } from './harness.js';

let t: TestApp;
let seeded: SeededTenant;
let upstream: TestHttpsServer;

beforeAll(async () => {
  // Connector calls of the seeded connector reach a loopback server that answers 404 to everything.
  const certificate = await createTestCertificate(['api.stripe.com']);
  upstream = await startHttpsServer(certificate);
  t = await createTestApp({
    env: { CONNECTOR_EGRESS_ALLOW: `127.0.0.1:${upstream.port}`, CONNECTOR_SECRETS_KEY: FUZZ_SECRETS_KEY },
    egress: { ca: certificate.cert, lookup: fixedLookup({ 'api.stripe.com': '127.0.0.1' }) },
  });
  seeded = await seedTenant(t);
});

/** Points the seeded connector at the loopback server (the PUT route's runs may have replaced its template). */
async function pointConnectorAtUpstream(): Promise<void> {
  const connector = await t.db.prisma.connector.findUniqueOrThrow({ where: { id: seeded.connectorId } });
  await t.db.prisma.connector.update({
    where: { id: connector.id },
    data: {
      status: 'active',
      template: {
        ...(connector.template as Record<string, unknown>),
        base_url: `https://api.stripe.com:${upstream.port}/v1`,
      },
    },
  });
}
afterAll(async () => {
  await t.close();
  await upstream.close();
});

/** Values that name the seeded tenant's objects, so that damaged bodies reach the code behind the checks. */
function validPathValue(name: string): string {
  const values: Record<string, string> = {
    role: 'ceo',
    test_id: seeded.abTestId,
    id: seeded.connectorId,
    tenant_id: seeded.tenantId,
    base_model: seeded.baseModel,
    process_id: seeded.processId,
    candidate_id: seeded.candidateId,
  };
  const value = values[name];
  if (!value) throw new Error(`no seeded value for the path parameter ${name}: add one`);
  return value;
}

/** The caller by its roles ("all" holds every role, so most requests pass the role checks). */
const callers = fc.oneof(
  { weight: 4, arbitrary: fc.constant('all' as const) },
  { weight: 1, arbitrary: fc.constantFrom('chairman', 'operator', 'member', 'agent') },
);

/** A header value the fetch API accepts (visible ASCII), possibly nonsense. */
const headerValue = fc.oneof(
  hostileString.map((text) => text.replace(/[^\x20-\x7e]/g, '').trim()),
  fc.constantFrom('"1"', '1', 'W/"1"', '*', '-1', '1e308', '99999999999999999999'),
);

const queryValue = (source: Extract<ArgSource, { from: 'query' }>) =>
  source.name === 'cursor'
    ? hostileCursor
    : fc.oneof(
        hostileString,
        hostileNumber.map((value) => toJsonText(value)),
      );

const encodeQuery = (value: string) => encodeURIComponent(value.replace(/[\ud800-\udfff]/g, '\ufffd'));

interface Request {
  caller: keyof SeededTenant['callers'];
  path: string;
  body: unknown;
  query: [string, string | undefined][];
  headers: Record<string, string>;
}

function requests(route: Route): fc.Arbitrary<Request> {
  const sources = Object.values(route.variables);
  const pathNames = [...route.path.matchAll(/\{(\w+)\}/g)].map((found) => found[1] as string);
  const pathValues = fc.tuple(
    ...pathNames.map((name) =>
      fc.oneof(
        { weight: 4, arbitrary: fc.constant(encodeURIComponent(validPathValue(name))) },
        { weight: 1, arbitrary: hostileSegment },
      ),
    ),
  );
  const query = fc.tuple(
    ...sources
      .filter((source): source is Extract<ArgSource, { from: 'query' }> => source.from === 'query')
      .map((source) => fc.tuple(fc.constant(source.name), fc.option(queryValue(source), { nil: undefined }))),
  );
  const headers = fc.tuple(
    ...sources
      .filter((source) => source.from === 'header')
      .map((source) =>
        fc.tuple(fc.constant((source as { name: string }).name), fc.option(headerValue, { nil: undefined })),
      ),
  );
  const hasBody = sources.some((source) => source.from === 'body');
  return fc.record({
    caller: callers,
    path: pathValues.map((values) =>
      pathNames.reduce((path, name, index) => path.replace(`{${name}}`, values[index] as string), route.path),
    ),
    body: hasBody ? bodies(fc.constant(route.example ?? {})) : fc.constant(undefined),
    query,
    headers: headers.map((pairs) =>
      Object.fromEntries(pairs.filter((pair): pair is [string, string] => pair[1] !== undefined)),
    ),
  });
}

describe('every REST route, with damaged requests', () => {
  it('covers the routes of the route table', () => {
    expect(routes.map((route) => `${route.method} ${route.path}`)).toContain(
      'PUT /api/v1/forge/connectors/{id}',
    );
    expect(routes.length).toBeGreaterThanOrEqual(10);
  });

  for (const route of routes) {
    it(
      `${route.method} ${route.path}: never 5xx, a refusal has a detail and changes no row`,
      async () => {
        if (route.path.startsWith('/api/v1/forge/connectors/{id}/')) await pointConnectorAtUpstream();
        await assertProperty([requests(route)], async (request) => {
          const search = request.query
            .filter(([, value]) => value !== undefined)
            .map(([name, value]) => `${name}=${encodeQuery(value as string)}`)
            .join('&');
          await expectSafeAnswer(
            t,
            async () => {
              const answer = await sendRest(
                t,
                route.method,
                `${request.path}${search ? `?${search}` : ''}`,
                seeded.callers[request.caller],
                request.body === undefined ? undefined : toJsonText(request.body),
                request.headers,
              );
              if (answer.status >= 400 && answer.status < 500) {
                const detail = (answer.body as { detail?: unknown } | null)?.detail;
                if (typeof detail !== 'string' && !Array.isArray(detail))
                  throw new Error(
                    `refusal without a detail: ${answer.status} ${JSON.stringify(answer.body)}`,
                  );
              }
              return answer;
            },
            (answer) => answer.status >= 400,
          );
        });
      },
      fuzzTimeout,
    );
  }
});
