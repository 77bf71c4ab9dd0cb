import { print } from 'graphql';
import { querySchemaOf } from '../src/domain/connectors/invoke-request.js';
import type { StoredConnectorTemplate } from '../src/domain/connectors/template.js';
import { graphql } from '../src/generated/graphql/index.js';
import type { ToolInputSchema } from './arguments.js';
import type { Execution } from './execute.js';

export const ListConnectors = graphql(`
  query McpConnectors($after: String) {
    connectors(first: 100, after: $after) {
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
  mutation McpInvokeConnector($id: ID!, $endpoint: ConnectorEndpointRefInput!, $input: ConnectorCallInput) {
    invokeConnector(id: $id, endpoint: $endpoint, input: $input) {
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

const listConnectorsQuery = print(ListConnectors);

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

/** MCP tool names: 1–128 characters of letters, digits, `_`, `-` and `.`. */
const MAX_NAME_LENGTH = 128;

const slug = (text: string, max: number) =>
  text
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '_')
    .replace(/^_+|_+$/g, '')
    .slice(0, max)
    .replace(/_+$/, '');

/**
 * `<connector>__<method>_<path>`, lowercased, every other character run an underscore: `Orders API`, `GET
 * /orders/{id}` → `orders_api__get_orders_id`. A name already taken gets the connector id's first 8
 * characters, then a counter.
 */
function toolNameOf(
  connectorName: string,
  method: string,
  path: string,
  connectorId: string,
  taken: Set<string>,
) {
  const base =
    `${slug(connectorName, 48) || 'connector'}__${method.toLowerCase()}_${slug(path, 64) || 'root'}`.slice(
      0,
      MAX_NAME_LENGTH - 12,
    );
  let name = base;
  if (taken.has(name)) name = `${base}_${connectorId.slice(0, 8)}`;
  for (let counter = 2; taken.has(name); counter += 1) name = `${base}_${connectorId.slice(0, 8)}_${counter}`;
  taken.add(name);
  return name;
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

/**
 * The tools of the caller's tenant's active connectors, one per endpoint, read with the `connectors` query
 * (newest first, every page), so the caller sees exactly what GraphQL shows it: its own tenant's.
 * Names are settled oldest connector first, so a new connector never renames an existing tool.
 */
export async function connectorTools(
  execution: Execution,
  reserved: ReadonlySet<string>,
): Promise<ConnectorTool[]> {
  const connectors: { id: string; name: string; status: string; template: unknown }[] = [];
  let after: string | null | undefined;
  do {
    const result = await execution.run({
      query: listConnectorsQuery,
      operationName: 'McpConnectors',
      variables: after ? { after } : {},
    });
    if (result.errors?.length) throw result.errors[0];
    const page = (result.data as { connectors: { nodes: typeof connectors; nextCursor: string | null } })
      .connectors;
    connectors.push(...page.nodes);
    after = page.nextCursor;
  } while (after);
  const taken = new Set(reserved);
  const tools: ConnectorTool[] = [];
  for (const connector of connectors.reverse()) {
    if (connector.status !== 'active') continue;
    const template = connector.template as StoredConnectorTemplate;
    for (const endpoint of template.endpoints ?? []) {
      const about = template.description ? ` ${template.description}` : '';
      tools.push({
        name: toolNameOf(connector.name, endpoint.method, endpoint.path, connector.id, taken),
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
  }
  return tools;
}
