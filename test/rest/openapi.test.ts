import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { validate } from '@readme/openapi-parser';
import openapiDiff from 'openapi-diff';
import openapiTS, { astToString } from 'openapi-typescript';
import ts from 'typescript';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { routes } from '../../rest/routes.js';
import { createTestApp, type TestApp } from '../support/app.js';

type Operation = {
  operationId: string;
  parameters?: { name: string; in: string }[];
  requestBody?: unknown;
  responses: Record<string, { $ref?: string; headers?: Record<string, unknown> }>;
};
type Document = {
  servers: { url: string }[];
  security: unknown[];
  paths: Record<string, Record<string, Operation>>;
  components: {
    securitySchemes: Record<string, unknown>;
    responses: Record<string, { headers?: Record<string, unknown> }>;
  };
};

let t: TestApp;
let document: Document;

/**
 * The document as an OpenAPI 3.0 tool must be given it: only the notations 3.1 changed are rewritten (a null
 * in `anyOf` or `type` becomes `nullable`, `const` a one-value `enum`, `propertyNames`, which 3.0 lacks, is
 * dropped) and the version says 3.0.3. Everything else is read by the tool as it is.
 */
function asOpenApi30(document: unknown): unknown {
  const rewrite = (node: unknown): unknown => {
    if (Array.isArray(node)) return node.map(rewrite);
    if (node === null || typeof node !== 'object') return node;
    const out: Record<string, unknown> = Object.fromEntries(
      Object.entries(node).map(([key, value]) => [key, rewrite(value)]),
    );
    const isNull = (schema: unknown) => (schema as { type?: unknown }).type === 'null';
    if (Array.isArray(out.anyOf) && out.anyOf.some(isNull)) {
      const rest = out.anyOf.filter((schema) => !isNull(schema));
      delete out.anyOf;
      if (rest.length === 1) Object.assign(out, rest[0]);
      else out.anyOf = rest;
      out.nullable = true;
    }
    if (Array.isArray(out.type)) {
      const types = out.type.filter((type) => type !== 'null');
      if (types.length < out.type.length) out.nullable = true;
      if (types.length === 1) out.type = types[0];
      else {
        delete out.type;
        out.anyOf = types.map((type) => ({ type }));
      }
    }
    if ('const' in out) {
      out.enum = [out.const];
      delete out.const;
    }
    delete out.propertyNames;
    return out;
  };
  return { ...(rewrite(document) as object), openapi: '3.0.3' };
}

beforeAll(async () => {
  t = await createTestApp();
  const response = await t.rest('GET', '/api/v1/openapi.json');
  expect(response.status).toBe(200);
  document = response.body;
});
afterAll(() => t.close());

/** Every operation of the document, in its order, named after its GraphQL operation. */
const OPERATION_IDS = [
  'sendChatMessage',
  'agentVitals',
  'abTestResults',
  'createConnector',
  'listConnectors',
  'readConnector',
  'updateConnector',
  'readConnectorCredential',
  'setConnectorCredential',
  'clearConnectorCredential',
  'readConnectorApprovalPolicy',
  'setConnectorApprovalPolicy',
  'clearConnectorApprovalPolicy',
  'invokeConnector',
  'testConnector',
  'listConnectorCallApprovals',
  'readConnectorCallApproval',
  'approveConnectorCall',
  'rejectConnectorCall',
  'requestConnectorCallChanges',
  'listTaskApprovals',
  'readTaskApproval',
  'approveTaskApproval',
  'rejectTaskApproval',
  'requestTaskApprovalChanges',
  'taskSteps',
  'delegateTask',
  'cancelTask',
  'acceptTask',
  'rejectTask',
  'pauseAgent',
  'resumeAgent',
  'prepareOnboarding',
  'rollbackModel',
];

/** The operations open to every role: they document no 403. */
const OPEN_TO_EVERY_ROLE = [
  'sendChatMessage',
  'agentVitals',
  'abTestResults',
  'listConnectors',
  'readConnector',
  'readConnectorCredential',
  'readConnectorApprovalPolicy',
  'taskSteps',
];

const operations = () =>
  Object.entries(document.paths).flatMap(([route, methods]) =>
    Object.entries(methods).map(([method, operation]) => ({ route, method, operation })),
  );
const operation = (method: string, route: string) => document.paths[route]?.[method] as Operation;

describe('the OpenAPI document', () => {
  it('validates as OpenAPI 3.1 without errors', async () => {
    const result = await validate(structuredClone(document) as never);
    expect(result.valid ? [] : result.errors).toEqual([]);
    expect(result.specification).toBe('OpenAPI');
  });

  it('lists no empty `required` anywhere: OpenAPI 3.0 readers refuse it', () => {
    const empty: string[] = [];
    const walk = (node: unknown, at: string): void => {
      if (Array.isArray(node)) {
        for (const [index, item] of node.entries()) walk(item, `${at}/${index}`);
      } else if (node !== null && typeof node === 'object') {
        for (const [key, value] of Object.entries(node)) {
          if (key === 'required' && Array.isArray(value) && value.length === 0) empty.push(at);
          walk(value, `${at}/${key}`);
        }
      }
    };
    walk(document, '#');
    expect(empty).toEqual([]);
  });

  it('is read by openapi-diff, a tool of OpenAPI 3.0, once its 3.1 type notations are put the 3.0 way', async () => {
    const spec = JSON.stringify(asOpenApi30(document));
    // The document against itself: openapi-diff validates both with swagger-parser (the 3.0 schema) first.
    const result = await openapiDiff.diffSpecs({
      sourceSpec: { content: spec, location: 'openapi.json', format: 'openapi3' },
      destinationSpec: { content: spec, location: 'openapi.json', format: 'openapi3' },
    });
    expect(result).toEqual({
      breakingDifferencesFound: false,
      nonBreakingDifferences: [],
      unclassifiedDifferences: [],
    });
  });

  it('names every operation after its GraphQL operation, uniquely', () => {
    const ids = operations().map(({ operation }) => operation.operationId);
    expect(ids).toEqual(OPERATION_IDS);
    expect(new Set(ids).size).toBe(ids.length);
  });

  it('declares servers and bearer JWT security', () => {
    expect(document.servers).toEqual([{ url: '/', description: 'This server' }]);
    expect(document.security).toEqual([{ bearerAuth: [] }]);
    expect(document.components.securitySchemes.bearerAuth).toMatchObject({
      type: 'http',
      scheme: 'bearer',
      bearerFormat: 'JWT',
    });
  });

  it('documents 401 with WWW-Authenticate, 429 with Retry-After and 405 with Allow on every operation', () => {
    for (const { operation } of operations()) {
      expect(operation.responses['401']?.$ref).toBe('#/components/responses/Unauthorized');
      expect(operation.responses['405']?.$ref).toBe('#/components/responses/MethodNotAllowed');
      expect(operation.responses['422']?.$ref).toMatch(
        /^#\/components\/responses\/(ValidationError|ValidationErrorOrKeyReused)$/,
      );
      expect(operation.responses['429']?.$ref).toBe('#/components/responses/TooManyRequests');
    }
    const shared = document.components.responses;
    expect(Object.keys(shared.Unauthorized?.headers ?? {})).toEqual(['WWW-Authenticate']);
    expect(Object.keys(shared.TooManyRequests?.headers ?? {})).toEqual(['Retry-After']);
    expect(Object.keys(shared.MethodNotAllowed?.headers ?? {})).toEqual(['Allow']);
  });

  it('documents 413 exactly on the operations that take a body', () => {
    for (const { operation } of operations()) {
      expect('413' in operation.responses).toBe(operation.requestBody !== undefined);
    }
  });

  it('documents 403 only where the operation is restricted to roles', () => {
    const restricted = operations()
      .filter(({ operation }) => '403' in operation.responses)
      .map(({ operation }) => operation.operationId);
    expect(restricted).toEqual(OPERATION_IDS.filter((id) => !OPEN_TO_EVERY_ROLE.includes(id)));
  });

  it('documents Idempotency-Key on every operation that changes something, and only there', () => {
    for (const { method, operation } of operations()) {
      const names = ((operation.parameters ?? []) as { name: string }[]).map((parameter) => parameter.name);
      expect(names.includes('Idempotency-Key'), `${method} ${operation.operationId}`).toBe(method !== 'get');
    }
  });

  it('documents the state errors where they occur', () => {
    const statuses = (method: string, route: string) =>
      Object.keys(operation(method, route).responses).filter((status) =>
        ['400', '404', '409', '412'].includes(status),
      );
    // Every route that changes something answers 400 (an invalid Idempotency-Key) and 409 (one in flight).
    expect(statuses('post', '/api/v1/agents/{role}/chat')).toEqual(['400', '404', '409']);
    expect(statuses('get', '/api/v1/agents/{role}/vitals')).toEqual(['404']);
    expect(statuses('put', '/api/v1/forge/connectors/{id}')).toEqual(['400', '404', '409', '412']);
    expect(statuses('put', '/api/v1/forge/connectors/{id}/credential')).toEqual(['400', '404', '409']);
    expect(Object.keys(operation('put', '/api/v1/forge/connectors/{id}/credential').responses)).toContain(
      '503',
    );
    expect(statuses('post', '/api/v1/dogfood/agents/{role}/pause')).toEqual(['400', '409']);
    expect(statuses('post', '/api/v1/finetuning/models/{tenant_id}/{base_model}/rollback')).toEqual([
      '400',
      '404',
      '409',
    ]);
  });

  it('documents the connector call routes: body fields, 502 and 504', () => {
    const invoke = operation('post', '/api/v1/forge/connectors/{id}/invoke');
    expect(Object.keys(invoke.responses)).toEqual(
      expect.arrayContaining(['200', '403', '404', '409', '413', '422', '502', '504']),
    );
    const body = (invoke as unknown as { requestBody: { content: Record<string, { schema: any }> } })
      .requestBody.content['application/json']?.schema;
    expect(body.required).toEqual(['endpoint']);
    expect(Object.keys(body.properties)).toEqual(['endpoint', 'input']);
    expect(Object.keys(body.properties.endpoint.properties)).toEqual(['method', 'path']);
    const probe = operation('post', '/api/v1/forge/connectors/{id}/test');
    expect(Object.keys(probe.responses)).toEqual(expect.arrayContaining(['200', '404', '502', '504']));
    expect(probe.responses).not.toHaveProperty('413');
  });

  it('documents If-Match on the connector edit and ETag on the connector responses', () => {
    const put = operation('put', '/api/v1/forge/connectors/{id}');
    expect(put.parameters).toContainEqual(expect.objectContaining({ name: 'If-Match', in: 'header' }));
    for (const [method, route, status] of [
      ['post', '/api/v1/forge/connectors', '201'],
      ['get', '/api/v1/forge/connectors/{id}', '200'],
      ['put', '/api/v1/forge/connectors/{id}', '200'],
    ] as const) {
      expect(Object.keys(operation(method, route).responses[status]?.headers ?? {})).toContain('ETag');
    }
  });

  it('gives every route a response example that its response schema accepts', () => {
    for (const route of routes) {
      expect(route.responseExample, `${route.method} ${route.path}`).toBeDefined();
      const parsed = route.responseSchema?.safeParse(route.responseExample);
      expect(parsed?.error?.issues ?? [], `${route.method} ${route.path}`).toEqual([]);
    }
  });
});

type JsonSchema = {
  type?: string | string[];
  nullable?: boolean;
  anyOf?: JsonSchema[];
  properties?: Record<string, JsonSchema>;
  items?: JsonSchema;
};

const acceptsNull = (schema: JsonSchema) =>
  schema.nullable === true ||
  schema.type === 'null' ||
  (Array.isArray(schema.type) && schema.type.includes('null')) ||
  (schema.anyOf ?? []).some(acceptsNull);

/** The schema without its null branch: where the properties or items of a nullable field are. */
const nonNull = (schema: JsonSchema): JsonSchema =>
  schema.anyOf?.find((option) => option.type !== 'null') ?? schema;

/** The schema at `path` of a body schema: property names, and `[]` for a list's items. */
function schemaAt(schema: JsonSchema, path: string[]): JsonSchema | undefined {
  let current: JsonSchema | undefined = schema;
  for (const key of path) {
    if (!current) return undefined;
    current = key === '[]' ? nonNull(current).items : nonNull(current).properties?.[key];
  }
  return current;
}

const connectorTemplate: [string[], boolean][] = [
  [['template'], false],
  ...['name', 'base_url', 'auth_type', 'description', 'endpoints', 'rate_limits'].map(
    (field): [string[], boolean] => [['template', field], false],
  ),
  [['template', 'endpoints', '[]'], false],
  ...['method', 'path', 'body_schema', 'query_params', 'response_schema'].map(
    (field): [string[], boolean] => [['template', 'endpoints', '[]', field], false],
  ),
  ...['per_minute', 'per_hour', 'per_day'].map((field): [string[], boolean] => [
    ['template', 'rate_limits', field],
    false,
  ]),
];

/** Every request body field of the seed's operations, and whether the seed lets it be null. */
const seedNullability: Record<string, [string[], boolean][]> = {
  'post /api/v1/agents/{role}/chat': [
    [['message'], false],
    [['attachments'], true],
    [['attachments', '[]'], false],
    [['attachments', '[]', 'data'], false],
    [['attachments', '[]', 'mime_type'], false],
    [['attachments', '[]', 'filename'], true],
    [['thread_id'], true],
    [['persist_thread'], false],
  ],
  'post /api/v1/forge/connectors': connectorTemplate,
  'put /api/v1/forge/connectors/{id}': connectorTemplate,
  'post /api/v1/dogfood/agents/{role}/pause': [
    [['actor_user_id'], false],
    [['reason'], true],
  ],
  'post /api/v1/hiring/{process_id}/onboard/{candidate_id}': [
    ...['job_design_data', 'candidate_name', 'salary', 'location'].map((field): [string[], boolean] => [
      [field],
      false,
    ]),
    ...['min_amount', 'max_amount', 'basis', 'currency'].map((field): [string[], boolean] => [
      ['salary', field],
      false,
    ]),
  ],
  'post /api/v1/finetuning/models/{tenant_id}/{base_model}/rollback': [
    [['reason'], false],
    [['performed_by'], false],
  ],
};

describe('request bodies in the OpenAPI document', () => {
  it.each(Object.entries(seedNullability))('%s: null only where the seed says nullable', (key, fields) => {
    const [method, route] = key.split(' ') as [string, string];
    const body = (operation(method, route).requestBody as { content: Record<string, { schema: JsonSchema }> })
      .content['application/json']?.schema as JsonSchema;
    const declared = fields.map(([path]) => {
      const field = schemaAt(body, path);
      return [path.join('.'), field === undefined ? 'absent' : acceptsNull(field)];
    });
    expect(declared).toEqual(fields.map(([path, nullable]) => [path.join('.'), nullable]));
  });
});

describe('a typed client generated from the document', () => {
  it('compiles, and rejects a call the API does not accept', async () => {
    const dir = await mkdtemp(path.join(tmpdir(), 'boardroom-openapi-client-'));
    try {
      const ast = await openapiTS(structuredClone(document) as never);
      await writeFile(path.join(dir, 'api.d.ts'), astToString(ast));
      await writeFile(
        path.join(dir, 'client.ts'),
        `import createClient from 'openapi-fetch';
import type { operations, paths } from './api.js';

const client = createClient<paths>({ baseUrl: 'http://127.0.0.1:4000' });

export async function completedTasks(role: string): Promise<number> {
  const { data, error } = await client.GET('/api/v1/agents/{role}/vitals', { params: { path: { role } } });
  if (error) return -1;
  return data.data.tasks_completed;
}

export async function pause(role: string): Promise<string | undefined> {
  const { data } = await client.POST('/api/v1/dogfood/agents/{role}/pause', {
    params: { path: { role } },
    body: { actor_user_id: 'chair-1', reason: 'review' },
  });
  return data?.event_id;
}

export async function rename(id: string, version: number) {
  const { data } = await client.PUT('/api/v1/forge/connectors/{id}', {
    params: { path: { id }, header: { 'If-Match': \`"\${version}"\` } },
    body: { template: { name: 'Stripe', base_url: 'https://api.stripe.com/v1', auth_type: 'bearer' } },
  });
  return data?.version;
}

export const pending: operations['sendChatMessage']['responses'][202]['content']['application/json']['data']['status'] =
  'pending';

export function wrongBody() {
  // @ts-expect-error a pause needs actor_user_id
  return client.POST('/api/v1/dogfood/agents/{role}/pause', { params: { path: { role: 'cfo' } }, body: { reason: 'x' } });
}

export function wrongPath() {
  // @ts-expect-error no such route
  return client.GET('/api/v1/agents/{role}/mood', { params: { path: { role: 'cfo' } } });
}

export function wrongType(): string {
  const { data } = { data: undefined as operations['agentVitals']['responses'][200]['content']['application/json'] | undefined };
  // @ts-expect-error tasks_completed is a number
  return data?.data.tasks_completed ?? '';
}
`,
      );
      const require = createRequire(import.meta.url);
      const program = ts.createProgram([path.join(dir, 'client.ts')], {
        strict: true,
        noEmit: true,
        target: ts.ScriptTarget.ES2022,
        module: ts.ModuleKind.NodeNext,
        moduleResolution: ts.ModuleResolutionKind.NodeNext,
        skipLibCheck: true,
        types: [],
        paths: { 'openapi-fetch': [path.dirname(require.resolve('openapi-fetch/package.json'))] },
      });
      const diagnostics = ts
        .getPreEmitDiagnostics(program)
        .map((diagnostic) => ts.flattenDiagnosticMessageText(diagnostic.messageText, '\n'));
      expect(diagnostics).toEqual([]);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
