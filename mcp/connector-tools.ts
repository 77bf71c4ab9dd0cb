import { createHash } from 'node:crypto';
import { print } from 'graphql';
import { querySchemaOf } from '../src/domain/connectors/invoke-request.js';
import type { StoredConnectorTemplate } from '../src/domain/connectors/template.js';
import { graphql } from '../src/generated/graphql/index.js';
import { decodeCursor } from '../src/schema/pagination.js';
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

/** Endpoints of one connector offered as tools: the template's first ones. The others are for invokeConnector. */
export const ENDPOINTS_PER_CONNECTOR = 20;
/** Tools one tools/list answers at most; `nextCursor` leads to the rest. */
export const TOOLS_PER_PAGE = 100;
/** A page ends once its connector tools pass this many characters of JSON (it always holds one). */
export const PAGE_CHARACTERS = 1024 * 1024;
/** Connectors one `connectors` query reads for a page, and such reads a page makes at most. */
const CONNECTORS_PER_READ = 10;
const READS_PER_PAGE = 10;

/** One endpoint of one of the tenant's active connectors, offered as a tool that calls invokeConnector. */
export interface ConnectorTool {
  name: string;
  title: string;
  description: string;
  inputSchema: ToolInputSchema;
  connectorId: string;
  method: string;
  path: string;
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
 * The tools of one connector: one per endpoint of its first ENDPOINTS_PER_CONNECTOR, in the template's
 * order, none unless it is active. A name two endpoints would share (the same method and path twice) is
 * listed once.
 */
export function toolsOfConnector(connector: ListedConnector): ConnectorTool[] {
  if (connector.status !== 'active') return [];
  const template = connector.template as StoredConnectorTemplate;
  const about = template.description ? ` ${template.description}` : '';
  const tools = new Map<string, ConnectorTool>();
  for (const endpoint of (template.endpoints ?? []).slice(0, ENDPOINTS_PER_CONNECTOR)) {
    const name = connectorToolName(connector, endpoint.method, endpoint.path);
    if (tools.has(name)) continue;
    tools.set(name, {
      name,
      title: `${connector.name}: ${endpoint.method} ${endpoint.path}`,
      description:
        `Calls ${endpoint.method} ${endpoint.path} of the connector “${connector.name}” (${template.base_url}).${about} ` +
        'Sent through the egress guard with the connector’s credential, rate limits and approval policy: a gated ' +
        'endpoint answers the approval request instead of calling. The result holds the server’s status, headers and body.',
      inputSchema: inputSchemaOf(endpoint),
      connectorId: connector.id,
      method: endpoint.method,
      path: endpoint.path,
    });
  }
  return [...tools.values()];
}

/** Where a page of connector tools starts: after the `connectors` cursor `after`, past `skip` tools. */
export interface ToolListPosition {
  after: string | null;
  skip: number;
}

export const FIRST_POSITION: ToolListPosition = { after: null, skip: 0 };

/** The `nextCursor` of a tools/list: opaque to the client. */
export const encodeToolCursor = (position: ToolListPosition) =>
  Buffer.from(JSON.stringify([position.after, position.skip])).toString('base64url');

/** The position a cursor `encodeToolCursor` made stands for, or null for any other string. */
export function decodeToolCursor(cursor: string): ToolListPosition | null {
  let value: unknown;
  try {
    value = JSON.parse(Buffer.from(cursor, 'base64url').toString());
  } catch {
    return null;
  }
  if (!Array.isArray(value) || value.length !== 2) return null;
  const [after, skip] = value as unknown[];
  if (after !== null && (typeof after !== 'string' || decodeCursor(after) === null)) return null;
  if (!Number.isInteger(skip) || (skip as number) < 0) return null;
  const position = { after, skip: skip as number };
  return encodeToolCursor(position) === cursor ? position : null;
}

/**
 * One page of the tools of the caller's tenant's active connectors, from `start`: connectors newest first,
 * read with the `connectors` query (so the caller sees exactly what GraphQL shows it: its own tenant's),
 * CONNECTORS_PER_READ at a time, READS_PER_PAGE reads at most; at most `room` tools and about
 * PAGE_CHARACTERS of them. Its cost is one such page's, however many connectors the tenant has. `next`:
 * where the next page starts, null after the last.
 */
export async function connectorToolPage(
  execution: Execution,
  start: ToolListPosition,
  room: number,
): Promise<{ tools: ConnectorTool[]; next: ToolListPosition | null }> {
  const tools: ConnectorTool[] = [];
  let characters = 0;
  let position = start;
  for (let reads = 1; ; reads += 1) {
    const result = await execution.run({
      query: listConnectorsQuery,
      operationName: 'McpConnectors',
      variables: { first: CONNECTORS_PER_READ, ...(position.after ? { after: position.after } : {}) },
    });
    if (result.errors?.length) throw result.errors[0];
    const page = (result.data as { connectors: { nodes: ListedConnector[]; nextCursor: string | null } })
      .connectors;
    const read = page.nodes.flatMap(toolsOfConnector);
    let index = position.skip;
    const full = () => tools.length >= room || characters >= PAGE_CHARACTERS;
    for (; index < read.length && !full(); index += 1) {
      const tool = read[index] as ConnectorTool;
      tools.push(tool);
      characters += JSON.stringify(tool).length;
    }
    if (index < read.length) return { tools, next: { after: position.after, skip: index } };
    if (!page.nextCursor) return { tools, next: null };
    position = { after: page.nextCursor, skip: 0 };
    if (full() || reads >= READS_PER_PAGE) return { tools, next: position };
  }
}

/**
 * The connector tool a name means, read with the `connector` query (the caller's tenant only): its
 * connector is the one whose id the name carries, and the name must be one of that connector's tools now.
 * Undefined otherwise: no such connector, another tenant's, not active, renamed, or no such endpoint.
 */
export async function connectorToolNamed(
  execution: Execution,
  name: string,
): Promise<ConnectorTool | undefined> {
  const id = connectorIdOfToolName(name);
  if (!id) return undefined;
  const result = await execution.run({
    query: readConnectorQuery,
    operationName: 'McpConnector',
    variables: { id },
  });
  const error = result.errors?.[0];
  if (error?.extensions?.code === 'NOT_FOUND') return undefined;
  if (error) throw error;
  const { connector } = result.data as { connector: ListedConnector };
  return toolsOfConnector(connector).find((tool) => tool.name === name);
}
