import { createHash } from 'node:crypto';
import { print } from 'graphql';
import { querySchemaOf } from '../src/domain/connectors/invoke-request.js';
import {
  CONNECTOR_DESCRIPTION_MAX_LENGTH,
  type StoredConnectorTemplate,
} from '../src/domain/connectors/template.js';
import { graphql } from '../src/generated/graphql/index.js';
import type { ToolInputSchema } from './arguments.js';
import type { Execution } from './execute.js';

export const ListConnectors = graphql(`
  query McpConnectors($first: Int!, $after: String) {
    connectors(first: $first, after: $after) {
      nodes {
        id
        name
        status
        template
      }
      nextCursor
    }
  }
`);

export const InvokeConnector = graphql(`
  mutation McpInvokeConnector(
    $id: ID!
    $endpoint: ConnectorEndpointRefInput!
    $input: ConnectorCallInput
    $taskId: ID
  ) {
    invokeConnector(id: $id, endpoint: $endpoint, input: $input, taskId: $taskId) {
      __typename
      ... on ConnectorInvocation {
        status
        headers
        body
        bytes
        durationMs
        redirects
        responseValidation {
          valid
          errors {
            path
            message
          }
        }
      }
      ... on ConnectorCallApproval {
        id
        approvalStatus: status
        approverRoles
        expiresAt
      }
    }
  }
`);

export const ReadConnector = graphql(`
  query McpConnector($id: ID!) {
    connector(id: $id) {
      id
      name
      status
      template
    }
  }
`);

const listConnectorsQuery = print(ListConnectors);
const readConnectorQuery = print(ReadConnector);

/** Connectors one `connectors` query reads, and such reads a search makes at most: the newest 1,000. */
const CONNECTORS_PER_READ = 100;
export const SEARCHED_CONNECTORS = 1000;
/** Characters of a connector's description (tenant-written) an endpoint's description carries at most. */
export const CONNECTOR_ABOUT_CHARACTERS = CONNECTOR_DESCRIPTION_MAX_LENGTH;

/**
 * One endpoint of one of the tenant's active connectors, reached with `call_connector_endpoint` by its
 * name. `about` is the connector's description as its tenant wrote it: data, never the server's words.
 */
export interface ConnectorEndpoint {
  name: string;
  connectorId: string;
  connectorName: string;
  about: string | null;
  method: string;
  path: string;
  inputSchema: ToolInputSchema;
}

// MCP tool names are 1–128 characters of letters, digits, `_`, `-` and `.`; ours are at most
// 32 + 1 + 26 + 2 + 6 + 1 + 48 + 9 = 125.
const CONNECTOR_SLUG_LENGTH = 32;
const PATH_SLUG_LENGTH = 48;

const slug = (text: string, max: number) =>
  text
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '_')
    .replace(/^_+|_+$/g, '')
    .slice(0, max)
    .replace(/_+$/, '');

/** RFC 4648 base32 in lower case, without padding: a uuid's 16 bytes in 26 characters. */
const BASE32 = 'abcdefghijklmnopqrstuvwxyz234567';
const ID_LENGTH = 26;

function base32(bytes: Uint8Array): string {
  let text = '';
  let buffer = 0;
  let bits = 0;
  for (const byte of bytes) {
    buffer = (buffer << 8) | byte;
    bits += 8;
    while (bits >= 5) {
      text += BASE32[(buffer >>> (bits - 5)) & 31];
      bits -= 5;
    }
    buffer &= (1 << bits) - 1;
  }
  return bits > 0 ? text + BASE32[(buffer << (5 - bits)) & 31] : text;
}

/** The uuid a tool name's 26 base32 characters spell, or null when they spell none (exactly). */
function uuidOfBase32(text: string): string | null {
  if (text.length !== ID_LENGTH) return null;
  const bytes: number[] = [];
  let buffer = 0;
  let bits = 0;
  for (const character of text) {
    const value = BASE32.indexOf(character);
    if (value < 0) return null;
    buffer = (buffer << 5) | value;
    bits += 5;
    if (bits >= 8) {
      bytes.push((buffer >>> (bits - 8)) & 255);
      bits -= 8;
      buffer &= (1 << bits) - 1;
    }
  }
  if (buffer !== 0 || bytes.length !== 16) return null;
  const hex = Buffer.from(bytes).toString('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

/**
 * `<method>_<path>`: the path lowercased, each run of other characters an underscore. When that does not
 * spell the path back exactly (`/orders/{id}`, `/a-b`, `/A`, a path cut at 48 characters), `-` and the
 * first 8 hex digits of SHA-256 of `METHOD path` follow, so that two endpoints never share it.
 */
function endpointPart(method: string, path: string): string {
  const spelled = slug(path, PATH_SLUG_LENGTH);
  const exact = spelled !== '' && path === `/${spelled.replaceAll('_', '/')}`;
  const base = `${method.toLowerCase()}_${spelled || 'root'}`;
  return exact
    ? base
    : `${base}-${createHash('sha256').update(`${method} ${path}`).digest('hex').slice(0, 8)}`;
}

/**
 * `<connector>_<id>__<method>_<path>`: the connector's name lowercased (each run of other characters an
 * underscore, at most 32), its id in base32 (26 characters), then the endpoint (`endpointPart`). `Billing
 * API` (id 5f0c…), `GET /customers` → `billing_api_l4gd…__get_customers`. The name depends on that one
 * connector and endpoint alone, never on the others, and the id never changes: a name always means the
 * same endpoint of the same connector, or, once its connector is renamed or its endpoint removed, none.
 */
export function connectorToolName(
  connector: { id: string; name: string },
  method: string,
  path: string,
): string {
  const id = base32(Buffer.from(connector.id.replaceAll('-', ''), 'hex'));
  return `${slug(connector.name, CONNECTOR_SLUG_LENGTH) || 'connector'}_${id}__${endpointPart(method, path)}`;
}

/** The connector id a connector tool's name carries, or null for a name no connector tool has. */
export function connectorIdOfToolName(name: string): string | null {
  const separator = name.indexOf('__');
  if (separator < ID_LENGTH + 2 || name[separator - ID_LENGTH - 1] !== '_') return null;
  return uuidOfBase32(name.slice(separator - ID_LENGTH, separator));
}

const HEADERS_SCHEMA = {
  type: 'object',
  description:
    'Extra request headers: name → string. Authorization, cookies, content and connection headers are set by the service.',
  additionalProperties: { type: 'string' },
};

function inputSchemaOf(endpoint: NonNullable<StoredConnectorTemplate['endpoints']>[number]): ToolInputSchema {
  const properties: Record<string, Record<string, unknown>> = {};
  if (endpoint.query_params) {
    properties.query = { ...querySchemaOf(endpoint.query_params), description: 'Query parameters.' };
  }
  if (endpoint.body_schema && endpoint.method !== 'GET') {
    properties.body = { ...endpoint.body_schema, description: 'JSON body.' };
  } else if (endpoint.method !== 'GET') {
    properties.body = { description: 'JSON body.' };
  }
  properties.headers = HEADERS_SCHEMA;
  return {
    type: 'object',
    properties,
    ...(endpoint.body_schema && endpoint.method !== 'GET' ? { required: ['body'] } : {}),
    additionalProperties: false,
  };
}

/** A connector as the MCP tools read it over GraphQL. */
export interface ListedConnector {
  id: string;
  name: string;
  status: string;
  template: unknown;
}

/**
 * The endpoints of one connector, in the template's order, none unless it is active. A name two endpoints
 * would share (the same method and path twice) is kept once.
 */
export function endpointsOfConnector(connector: ListedConnector): ConnectorEndpoint[] {
  if (connector.status !== 'active') return [];
  const template = connector.template as StoredConnectorTemplate;
  // Bounded when written; cut here too, for rows written before the bound.
  const about = template.description ? template.description.slice(0, CONNECTOR_ABOUT_CHARACTERS) : null;
  const endpoints = new Map<string, ConnectorEndpoint>();
  for (const endpoint of template.endpoints ?? []) {
    const name = connectorToolName(connector, endpoint.method, endpoint.path);
    if (endpoints.has(name)) continue;
    endpoints.set(name, {
      name,
      connectorId: connector.id,
      connectorName: connector.name,
      about,
      method: endpoint.method,
      path: endpoint.path,
      inputSchema: inputSchemaOf(endpoint),
    });
  }
  return [...endpoints.values()];
}

/**
 * The tenant's active connectors' endpoints, connectors newest first, read with the `connectors` query (so
 * the caller sees exactly what GraphQL shows it: its own tenant's), CONNECTORS_PER_READ at a time, the
 * newest SEARCHED_CONNECTORS at most: one search costs the same however many connectors the tenant has.
 */
export async function tenantEndpoints(execution: Execution): Promise<ConnectorEndpoint[]> {
  const endpoints: ConnectorEndpoint[] = [];
  let after: string | null = null;
  for (let read = 0; read < SEARCHED_CONNECTORS / CONNECTORS_PER_READ; read += 1) {
    const result = await execution.run({
      query: listConnectorsQuery,
      operationName: 'McpConnectors',
      variables: { first: CONNECTORS_PER_READ, ...(after ? { after } : {}) },
    });
    if (result.errors?.length) throw result.errors[0];
    const page = (result.data as { connectors: { nodes: ListedConnector[]; nextCursor: string | null } })
      .connectors;
    endpoints.push(...page.nodes.flatMap(endpointsOfConnector));
    if (!page.nextCursor) break;
    after = page.nextCursor;
  }
  return endpoints;
}

/**
 * The endpoint a name means, read with the `connector` query (the caller's tenant only): its connector is
 * the one whose id the name carries, and the name must be one of that connector's endpoints now. Undefined
 * otherwise: no such connector, another tenant's, not active, renamed, or no such endpoint. `read` keeps
 * each connector read once for one request.
 */
export async function connectorEndpointNamed(
  execution: Execution,
  name: string,
  read: Map<string, Promise<ConnectorEndpoint[]>> = new Map(),
): Promise<ConnectorEndpoint | undefined> {
  const id = connectorIdOfToolName(name);
  if (!id) return undefined;
  let endpoints = read.get(id);
  if (!endpoints) {
    endpoints = readConnectorEndpoints(execution, id);
    read.set(id, endpoints);
  }
  return (await endpoints).find((endpoint) => endpoint.name === name);
}

async function readConnectorEndpoints(execution: Execution, id: string): Promise<ConnectorEndpoint[]> {
  const result = await execution.run({
    query: readConnectorQuery,
    operationName: 'McpConnector',
    variables: { id },
  });
  const error = result.errors?.[0];
  if (error?.extensions?.code === 'NOT_FOUND') return [];
  if (error) throw error;
  const { connector } = result.data as { connector: ListedConnector };
  return endpointsOfConnector(connector);
}
