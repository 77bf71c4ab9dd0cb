import type { ValidationDetail } from '../../validation/index.js';
import { badRequest, invalidInput } from '../errors.js';
import type { ConnectorHttpMethod } from './endpoint-path.js';
import { checkAgainst, compileSchema, type SchemaProblem } from './json-schema.js';
import { endpointUrl } from './request-path.js';
import type { StoredConnectorEndpoint, StoredConnectorTemplate } from './template.js';

export type QueryValue = string | number | boolean | (string | number | boolean)[];

/** What the caller asks of one endpoint: the values its template lets a caller choose. */
export interface InvocationInput {
  query?: Record<string, QueryValue> | null | undefined;
  body?: unknown;
  headers?: Record<string, string> | null | undefined;
}

export interface EndpointRef {
  method: ConnectorHttpMethod;
  path: string;
}

/** The request to send, before headers are assembled: what an approval policy matches (`isGated`). */
export interface BuiltRequest {
  /** The URL sent (`endpointUrl`: path normalised) with the caller's query parameters. */
  url: string;
  method: ConnectorHttpMethod;
  endpoint: StoredConnectorEndpoint;
  /** JSON text of the body, when there is one. */
  body?: string;
}

function detailOf(problem: SchemaProblem, at: (string | number)[]): ValidationDetail {
  if (problem.keyword === 'required' && problem.property !== undefined) {
    return {
      type: 'missing',
      loc: [...at, ...problem.path, problem.property],
      msg: 'Field required',
      input: null,
    };
  }
  if (problem.keyword === 'additionalProperties' && problem.property !== undefined) {
    return {
      type: 'extra_forbidden',
      loc: [...at, ...problem.path, problem.property],
      msg: 'Extra inputs are not permitted',
      input: null,
    };
  }
  return {
    type: 'value_error',
    loc: [...at, ...problem.path],
    msg: `Value error, ${problem.message}`,
    input: null,
    ctx: { error: problem.message },
  };
}

/** Fills each item's `input` with the value found at its location under `root` (located from `at`). */
function withInputs(details: ValidationDetail[], root: unknown, depth: number): ValidationDetail[] {
  return details.map((item) => {
    if (item.type === 'missing') return item;
    let current = root;
    for (const segment of item.loc.slice(depth)) {
      current =
        current !== null && typeof current === 'object'
          ? (current as Record<string | number, unknown>)[segment]
          : undefined;
    }
    return { ...item, input: current ?? null };
  });
}

function compileOrRefuse(schema: Record<string, unknown>, field: string, endpoint: EndpointRef) {
  const validate = compileSchema(schema);
  if (typeof validate === 'string') {
    throw badRequest(
      `The ${field} of endpoint ${endpoint.method} ${endpoint.path} is not a valid JSON Schema (${validate}); correct the connector template`,
    );
  }
  return validate;
}

/**
 * `query_params` is either an object schema of its own (`{"type": "object", "properties": …}`) or, as the
 * templates usually write it, a map of parameter name to the schema of its value. In the second form no
 * other parameter is accepted.
 */
export function querySchemaOf(queryParams: Record<string, unknown>): Record<string, unknown> {
  if (queryParams.type === 'object' || 'properties' in queryParams) return queryParams;
  return { type: 'object', properties: queryParams, additionalProperties: false };
}

export function findEndpoint(template: StoredConnectorTemplate, ref: EndpointRef): StoredConnectorEndpoint {
  const endpoint = template.endpoints?.find((item) => item.method === ref.method && item.path === ref.path);
  if (endpoint) return endpoint;
  const known = (template.endpoints ?? []).map((item) => `${item.method} ${item.path}`);
  const message = `the connector has no endpoint ${ref.method} ${ref.path}${known.length ? ` (it has ${known.join(', ')})` : ''}`;
  throw invalidInput([
    {
      type: 'value_error',
      loc: ['endpoint'],
      msg: `Value error, ${message}`,
      input: ref,
      ctx: { error: message },
    },
  ]);
}

function appendQuery(url: URL, query: Record<string, QueryValue>) {
  for (const [name, value] of Object.entries(query)) {
    for (const item of Array.isArray(value) ? value : [value]) url.searchParams.append(name, String(item));
  }
}

/**
 * Builds the request of one endpoint from the stored template: base_url + the endpoint's path, normalised
 * (`endpointUrl`: the URL matched by an approval policy is the one sent), the caller's query parameters
 * and body validated against the endpoint's `query_params` and `body_schema` (422 at
 * `input.query.<name>` / `input.body.<path>` otherwise).
 */
export function buildRequest(
  template: StoredConnectorTemplate,
  endpoint: StoredConnectorEndpoint,
  input: InvocationInput,
): BuiltRequest {
  const query = input.query ?? {};
  const problems: ValidationDetail[] = [];

  if (endpoint.query_params) {
    const validate = compileOrRefuse(querySchemaOf(endpoint.query_params), 'query_params', endpoint);
    const checked = checkAgainst(validate, query);
    if (!checked.valid) {
      const at = ['input', 'query'];
      problems.push(
        ...withInputs(
          checked.problems.map((problem) => detailOf(problem, at)),
          query,
          2,
        ),
      );
    }
  } else {
    for (const name of Object.keys(query)) {
      problems.push({
        type: 'extra_forbidden',
        loc: ['input', 'query', name],
        msg: 'Extra inputs are not permitted',
        input: query[name],
      });
    }
  }

  const hasBody = input.body !== undefined && input.body !== null;
  if (hasBody && endpoint.method === 'GET') {
    const message = 'a GET endpoint takes no body';
    problems.push({
      type: 'value_error',
      loc: ['input', 'body'],
      msg: `Value error, ${message}`,
      input: input.body,
      ctx: { error: message },
    });
  } else if (endpoint.body_schema) {
    const validate = compileOrRefuse(endpoint.body_schema, 'body_schema', endpoint);
    if (!hasBody) {
      problems.push({ type: 'missing', loc: ['input', 'body'], msg: 'Field required', input: null });
    } else {
      const checked = checkAgainst(validate, input.body);
      if (!checked.valid) {
        const at = ['input', 'body'];
        problems.push(
          ...withInputs(
            checked.problems.map((problem) => detailOf(problem, at)),
            input.body,
            2,
          ),
        );
      }
    }
  }
  if (problems.length > 0) throw invalidInput(problems);

  const url = endpointUrl(template.base_url, endpoint.path);
  // The path was checked at create time; this keeps a request on the template's host whatever it holds.
  if (url.host !== new URL(template.base_url).host) {
    throw badRequest(`Endpoint ${endpoint.method} ${endpoint.path} does not stay on the connector's host`);
  }
  appendQuery(url, query);
  return {
    url: url.href,
    method: endpoint.method,
    endpoint,
    ...(hasBody ? { body: JSON.stringify(input.body) } : {}),
  };
}
