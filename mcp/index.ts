import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { WebStandardStreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js';
import {
  CallToolRequestSchema,
  ListToolsRequestSchema,
  McpError,
  type Tool,
} from '@modelcontextprotocol/sdk/types.js';
import { GraphQLError } from 'graphql';
import type { Plugin, YogaServer } from 'graphql-yoga';
import { allows, type CompiledOperation, compileOperation } from '../rest/compile.js';
import { authenticate } from '../src/auth/request.js';
import type { Viewer } from '../src/auth/viewer.js';
import type { Context, ServerContext } from '../src/context.js';
import { TASK_META_KEY } from '../src/domain/agents/task-meta.js';
import { JSON_RPC, MCP_PATH, mcpErrorResponse, unavailableErrorOf } from '../src/errors.js';
import { isPayloadTooLarge, MAX_BODY_BYTES, withBody } from '../src/http/body.js';
import { parseJsonBody } from '../src/http/json-body.js';
import { requestIdOf } from '../src/http/request-id.js';
import { schema } from '../src/schema/index.js';
import type { Services } from '../src/services.js';
import { inputSchemaOf, invalidParams, type ToolInputSchema, variablesOf } from './arguments.js';
import {
  CALL_TOOL,
  callEndpoint,
  connectorSurfaceTools,
  DESCRIBE_TOOL,
  describeEndpoints,
  invokeEndpoint,
  SEARCH_TOOL,
  searchEndpoints,
} from './connector-surface.js';
import { connectorEndpointNamed, InvokeConnector, ListConnectors, ReadConnector } from './connector-tools.js';
import { type Execution, executionOf, internalError, toolResultOf } from './execute.js';
import { tagTaskOfAnswer } from './gen-ai-spans.js';
import { originPolicyOf, originRefusal } from './origin.js';
import { openToolListStream } from './tool-list-stream.js';
import { type AgentTool, agentTools } from './tools.js';

/** Roles that may use the MCP endpoint: agent runtimes, and operators driving connectors from an MCP client. */
const MCP_ROLES = new Set(['agent', 'operator']);

/** Largest JSON-RPC message the endpoint reads (one message per request, never a batch). */
const MCP_MAX_BODY_BYTES = MAX_BODY_BYTES;

/** The body limit the MCP endpoint declares, for the intake's limit decided when a request arrives. */
export function mcpBodyLimit(_method: string, pathname: string): number | undefined {
  return pathname === MCP_PATH ? MCP_MAX_BODY_BYTES : undefined;
}

const PROTECTED_RESOURCE_PATHS = new Set([
  '/.well-known/oauth-protected-resource',
  `/.well-known/oauth-protected-resource${MCP_PATH}`,
]);

/** The server as every request and stream declares it: tools, whose list changes with the tenant's connectors. */
const newServer = () =>
  new Server(
    { name: 'boardroom', title: 'Boardroom', version: '0.1.0' },
    {
      capabilities: { tools: { listChanged: true } },
      instructions:
        'Boardroom queues work for agent roles. Claim with claim_next_task, then end each claimed task with ' +
        `complete_task (exact usage) or fail_task. The tenant’s connectors are reached with ${SEARCH_TOOL} ` +
        `(find endpoints), ${DESCRIBE_TOOL} (their input schemas) and ${CALL_TOOL}, through its egress ` +
        'guard, rate limits and approval policies. The GET stream sends notifications/tools/list_changed ' +
        'when the tenant’s connectors change: search again then.',
    },
  );

interface CompiledTool {
  tool: AgentTool;
  compiled: CompiledOperation;
  inputSchema: ToolInputSchema;
}

/** The MCP tool table compiled once: each tool's operation, roles and input schema. */
export function compileTools(): CompiledTool[] {
  return agentTools.map((tool) => {
    const compiled = compileOperation(tool.document, schema, `MCP tool ${tool.name}`);
    return { tool, compiled, inputSchema: inputSchemaOf(compiled, tool.arguments) };
  });
}

const invokeOperation = compileOperation(InvokeConnector, schema, 'MCP connector tools');
const invoke = { query: invokeOperation.query, operationName: invokeOperation.operationName };

/** Every operation the MCP tools run, for the metrics' operation names. */
export const mcpOperations = (): CompiledOperation[] => [
  ...compileTools().map((tool) => tool.compiled),
  invokeOperation,
  compileOperation(ListConnectors, schema, 'MCP connector tools'),
  compileOperation(ReadConnector, schema, 'MCP connector tools'),
];

function listedTool(tool: CompiledTool): Tool {
  return {
    name: tool.tool.name,
    title: tool.tool.title,
    description: tool.tool.description,
    inputSchema: tool.inputSchema,
    annotations: { readOnlyHint: tool.tool.readOnly, openWorldHint: false },
  };
}

/**
 * Serves the MCP endpoint (`POST /mcp`, Streamable HTTP, stateless: each request is verified and answered on
 * its own, on any instance; `GET /mcp`, the stream of tool list changes, see tool-list-stream.ts) and, when an
 * external identity provider is configured, the protected resource
 * metadata MCP clients discover it by. Every tool runs a GraphQL operation through this yoga server, as a
 * REST route does.
 */
export function useMcp(services: Services): Plugin<Context> {
  const tools = compileTools();
  const toolsByName = new Map(tools.map((tool) => [tool.tool.name, tool]));
  const externalIdentity = services.config.auth.jwksUrl !== undefined;
  const originPolicy = originPolicyOf(services.config);
  let server: YogaServer<ServerContext, Context> | undefined;

  const resourceMetadataUrl = (url: URL) => `${url.origin}/.well-known/oauth-protected-resource${MCP_PATH}`;
  const challenge = (url: URL, error?: string) =>
    [
      'Bearer',
      [
        ...(error ? [`error="${error}"`] : []),
        ...(externalIdentity ? [`resource_metadata="${resourceMetadataUrl(url)}"`] : []),
      ].join(', '),
    ]
      .filter(Boolean)
      .join(' ');

  function mcpServerFor(execution: Execution, viewer: Viewer, request: Request): Server {
    const mcp = newServer();
    const guarded = async <T>(work: () => Promise<T>): Promise<T> => {
      try {
        return await work();
      } catch (error) {
        if (error instanceof McpError) throw error;
        const unavailable =
          error instanceof GraphQLError && error.extensions?.code === 'SERVICE_UNAVAILABLE'
            ? error
            : unavailableErrorOf(error, services.unavailableCause, services.config.retryAfterSeconds);
        if (unavailable) throw new McpError(JSON_RPC.SERVER_ERROR, unavailable.message);
        services.logger.error(
          { err: error, requestId: requestIdOf(request) },
          'unexpected error in MCP tool',
        );
        throw internalError();
      }
    };
    mcp.setRequestHandler(ListToolsRequestSchema, ({ params }) =>
      guarded(async () => {
        // One page, the same size whatever the tenant's connectors: no cursor leads anywhere.
        if (params?.cursor !== undefined) throw invalidParams('Invalid cursor: the tool list has one page');
        const listed = tools.filter((tool) => allows(tool.compiled, viewer)).map(listedTool);
        return { tools: allows(invokeOperation, viewer) ? [...listed, ...connectorSurfaceTools] : listed };
      }),
    );
    mcp.setRequestHandler(CallToolRequestSchema, ({ params }) =>
      guarded(async () => {
        const agentTool = toolsByName.get(params.name);
        if (agentTool) {
          const variables = variablesOf(agentTool.inputSchema, agentTool.tool.arguments, params.arguments);
          const result = await execution.run({
            query: agentTool.compiled.query,
            operationName: agentTool.compiled.operationName,
            variables,
          });
          tagTaskOfAnswer(result.data);
          return toolResultOf(result, agentTool.tool.arguments);
        }
        if (!allows(invokeOperation, viewer)) throw invalidParams(`Unknown tool: ${params.name}`);
        // The task the call is made for, when the caller names it: counted by the repeated-call breaker.
        const meta = (params._meta as Record<string, unknown> | undefined)?.[TASK_META_KEY];
        const taskId = typeof meta === 'string' ? meta : undefined;
        if (params.name === SEARCH_TOOL) return searchEndpoints(execution, params.arguments);
        if (params.name === DESCRIBE_TOOL) return describeEndpoints(execution, params.arguments);
        if (params.name === CALL_TOOL) return callEndpoint(execution, invoke, params.arguments, taskId);
        // An endpoint's own name, as tools/list once listed it: still called, never listed (ADR 0052).
        const endpoint = await connectorEndpointNamed(execution, params.name);
        if (!endpoint) throw invalidParams(`Unknown tool: ${params.name}`);
        return invokeEndpoint(execution, invoke, endpoint, params.arguments, taskId);
      }),
    );
    return mcp;
  }

  async function answer(request: Request, url: URL, serverContext: ServerContext): Promise<Response> {
    if (request.method !== 'POST' && request.method !== 'GET') {
      // Stateless: no session to end (DELETE).
      return mcpErrorResponse(405, 'Method Not Allowed: the MCP endpoint takes GET and POST', {
        Allow: 'GET, POST',
      });
    }
    // The outcome use-authentication already decided for this request: one verification per request.
    const outcome = await authenticate(request, serverContext, services.tokens);
    if (outcome.status !== 'verified') {
      const message = outcome.status === 'failed' ? outcome.error.message : 'Not authenticated';
      return mcpErrorResponse(401, message, {
        'WWW-Authenticate': challenge(url, outcome.status === 'failed' ? 'invalid_token' : undefined),
      });
    }
    const { viewer } = outcome;
    if (!viewer.roles.some((role) => MCP_ROLES.has(role))) {
      return mcpErrorResponse(403, 'Not allowed for your role: the MCP endpoint serves agents and operators');
    }
    if (request.method === 'GET') return openToolListStream(services, viewer, request, newServer());
    let parsedBody: unknown;
    try {
      parsedBody = await withBody(request, MCP_MAX_BODY_BYTES, parseJsonBody);
    } catch (error) {
      if (isPayloadTooLarge(error)) return mcpErrorResponse(413, error.message);
      if (error instanceof SyntaxError) {
        return mcpErrorResponse(400, `Parse error: ${error.message}`, {}, globalThis, JSON_RPC.PARSE_ERROR);
      }
      throw error;
    }
    // One message per request, so that each counts against the rate limit and the database budget, and
    // one request's work is one message's: MCP has had no batches since its 2025-06-18 revision.
    if (Array.isArray(parsedBody)) {
      return mcpErrorResponse(
        400,
        'Invalid Request: a batch of JSON-RPC messages is not accepted; send one message per request',
        {},
        globalThis,
        JSON_RPC.INVALID_REQUEST,
      );
    }
    if (!server) throw new Error('the MCP transport runs inside a yoga server');
    const execution = executionOf(server, request, serverContext);
    const mcp = mcpServerFor(execution, viewer, request);
    const transport = new WebStandardStreamableHTTPServerTransport({
      sessionIdGenerator: undefined,
      enableJsonResponse: true,
    });
    await mcp.connect(transport);
    try {
      return await transport.handleRequest(request, {
        parsedBody,
        authInfo: {
          token: '',
          clientId: viewer.sub,
          scopes: [...viewer.roles],
          extra: { tenantId: viewer.tenantId },
        },
      });
    } finally {
      await mcp.close();
    }
  }

  return {
    onYogaInit({ yoga }) {
      server = yoga as unknown as YogaServer<ServerContext, Context>;
    },
    async onRequest({ request, url, endResponse, serverContext }) {
      if (PROTECTED_RESOURCE_PATHS.has(url.pathname) && externalIdentity && request.method === 'GET') {
        const { issuer } = services.config.auth;
        endResponse(
          Response.json({
            resource: `${url.origin}${MCP_PATH}`,
            ...(issuer ? { authorization_servers: [issuer] } : {}),
            bearer_methods_supported: ['header'],
            resource_name: 'Boardroom',
          }),
        );
        return;
      }
      if (url.pathname !== MCP_PATH) return;
      const refusal = originRefusal(originPolicy, request, url);
      if (refusal) {
        endResponse(mcpErrorResponse(403, refusal));
        return;
      }
      try {
        endResponse(await answer(request, url, serverContext as ServerContext));
      } catch (error) {
        const unavailable = unavailableErrorOf(
          error,
          services.unavailableCause,
          services.config.retryAfterSeconds,
        );
        if (unavailable) {
          endResponse(
            mcpErrorResponse(503, unavailable.message, {
              'Retry-After': String(services.config.retryAfterSeconds),
            }),
          );
          return;
        }
        services.logger.error(
          { err: error, requestId: requestIdOf(request) },
          'unexpected error in MCP request',
        );
        endResponse(mcpErrorResponse(500, 'Internal Server Error', {}, globalThis, -32603));
      }
    },
  };
}
