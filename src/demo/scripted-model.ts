import { createServer, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/** The connector surface of a fixed size, when the MCP endpoint offers it instead of a tool per endpoint. */
const SEARCH_TOOL = 'search_connector_endpoints';
const CALL_TOOL = 'call_connector_endpoint';

/** The model name the demo's runtimes ask for, and its price (USD per million tokens, gpt-4o's list price). */
export const DEMO_MODEL = 'boardroom-demo';
export const DEMO_PRICES = { [DEMO_MODEL]: { input: 2.5, cachedInput: 1.25, output: 10 } };

export interface ScriptedModel {
  /** `http://127.0.0.1:<port>/v1`: the runtimes' OPENAI_BASE_URL. */
  baseURL: string;
  address: string;
  /** Chat Completions requests answered so far. */
  requests: number;
  close(): Promise<void>;
}

interface ToolCall {
  id: string;
  type: 'function';
  function: { name: string; arguments: string };
}

interface Message {
  role: string;
  content?: unknown;
  tool_calls?: ToolCall[];
}

interface OfferedTool {
  type: string;
  function?: { name: string; description?: string; parameters?: Record<string, unknown> };
}

interface Reply {
  content: string | null;
  toolCalls: ToolCall[];
}

const text = (content: unknown) =>
  typeof content === 'string'
    ? content
    : Array.isArray(content)
      ? content.map((part) => (part as { text?: string }).text ?? '').join('')
      : '';

/**
 * What the scripted model answers, decided from the conversation alone (deterministic, no state between
 * requests), so any runtime that speaks Chat Completions gets the same script:
 * - a task that asks for a board brief is delegated (boardroom_delegate, to the roles the tool offers);
 *   once the sub-tasks' answers are in, a recommendation is recorded and the brief answered;
 * - a task about invoices calls the connector endpoint `GET /invoices` (a tool of its own, found by name or
 *   description, or through search_connector_endpoints and call_connector_endpoint, whichever the tools
 *   offered are), then, when it asks to pay, `POST /payments`, which the approval policy holds for the
 *   chairman; then it answers with what the tools said;
 * - anything else is answered at once.
 */
export function scriptedReply(messages: Message[], tools: OfferedTool[]): Reply {
  const offered = tools.flatMap((tool) => (tool.type === 'function' && tool.function ? [tool.function] : []));
  const find = (method: string, path: string) =>
    offered.find(
      (tool) =>
        tool.name.endsWith(`__${method.toLowerCase()}_${path.slice(1)}`) ||
        (tool.description ?? '').includes(`${method} ${path} `),
    );
  const called = new Set(
    messages.flatMap((message) => (message.tool_calls ?? []).map((call) => call.function.name)),
  );
  const toolResults = messages
    .filter((message) => message.role === 'tool')
    .map((message) => text(message.content));
  const users = messages.filter((message) => message.role === 'user').map((message) => text(message.content));
  const task = (users[0] ?? '').toLowerCase();
  const step = messages.filter((message) => message.role === 'assistant').length;
  const callOf = (name: string, args: unknown): ToolCall => ({
    id: `call_${step}_${name.slice(-12)}`,
    type: 'function',
    function: { name, arguments: JSON.stringify(args) },
  });

  /**
   * The next call towards the connector endpoint `METHOD path`, however the tools offer it: a tool per
   * endpoint (named `…__get_invoices`, or described as `GET /invoices`), or the search-and-call surface
   * (search_connector_endpoints, then call_connector_endpoint with the name found). 'done' once it was
   * called, null when no tool offered reaches it.
   */
  const endpointStep = (
    method: string,
    path: string,
    args: Record<string, unknown>,
  ): ToolCall | 'done' | null => {
    const direct = find(method, path);
    if (direct) return called.has(direct.name) ? 'done' : callOf(direct.name, args);
    const call = offered.find((tool) => tool.name === CALL_TOOL);
    if (!call) return null;
    const target = searched().find((endpoint) => endpoint.method === method && endpoint.path === path);
    if (target) {
      const made = messages.some((message) =>
        (message.tool_calls ?? []).some(
          (toolCall) => toolCall.function.name === CALL_TOOL && argumentsOf(toolCall).name === target.name,
        ),
      );
      return made ? 'done' : callOf(CALL_TOOL, { name: target.name, arguments: args });
    }
    const search = offered.find((tool) => tool.name === SEARCH_TOOL);
    if (!search || called.has(SEARCH_TOOL)) return null;
    return callOf(SEARCH_TOOL, { query: 'ledger invoices payments' });
  };
  /** The endpoints the searches so far answered. */
  const searched = () =>
    toolResults.flatMap((result) => {
      try {
        const endpoints = (JSON.parse(result) as { endpoints?: unknown }).endpoints;
        return Array.isArray(endpoints)
          ? (endpoints as { name: string; method: string; path: string }[])
          : [];
      } catch {
        return [];
      }
    });

  if (task.includes('board brief')) {
    const subTasksEnded = users.some((message) => message.startsWith('Your sub-tasks have ended'));
    const delegate = offered.find((tool) => tool.name === 'boardroom_delegate');
    if (!subTasksEnded && delegate && !called.has(delegate.name)) {
      const roles = delegationTargets(delegate.parameters).filter((role) => role === 'cfo' || role === 'coo');
      if (roles.length > 0) {
        return {
          content: null,
          toolCalls: [
            callOf(delegate.name, {
              delegations: roles.map((role) => ({
                role,
                message:
                  role === 'cfo'
                    ? 'List the overdue invoices.'
                    : 'Summarise this week’s operations in two lines.',
                costCapUsd: 0.5,
              })),
            }),
          ],
        };
      }
    }
    const recommend = offered.find((tool) => tool.name === 'boardroom_recommend');
    if (subTasksEnded && recommend && !called.has(recommend.name)) {
      return {
        content: null,
        toolCalls: [
          callOf(recommend.name, {
            summary: 'Chase the two overdue invoices before the quarter closes.',
            predictedOutcome: 'About $4,090 collected within 30 days.',
          }),
        ],
      };
    }
    const reports = users.slice(1).join('\n');
    return {
      content: `Board brief.\n${reports || 'Nothing came back from the team.'}\nRecommendation recorded for the board.`,
      toolCalls: [],
    };
  }

  if (task.includes('invoice')) {
    const invoices = endpointStep('GET', '/invoices', { query: { status: 'overdue' } });
    if (invoices !== 'done' && invoices !== null) return { content: null, toolCalls: [invoices] };
    if (task.includes('pay')) {
      const payment = endpointStep('POST', '/payments', { body: { invoiceId: 'inv_1001', amountUsd: 1200 } });
      if (payment !== 'done' && payment !== null) return { content: null, toolCalls: [payment] };
    }
    const found = [...new Set(toolResults.join(' ').match(/inv_\d+/g) ?? [])];
    const waiting = toolResults.some((result) => result.includes('pending_approval'));
    return {
      content:
        (found.length > 0
          ? `Overdue invoices: ${found.join(', ')}.`
          : 'I could not read the ledger: no invoice tool answered.') +
        (waiting ? ' The payment of inv_1001 waits for the chairman’s approval; it was not made yet.' : ''),
      toolCalls: [],
    };
  }

  return {
    content: `Done: ${users[0]?.slice(0, 200) ?? 'nothing asked'} (scripted demo answer).`,
    toolCalls: [],
  };
}

function argumentsOf(toolCall: ToolCall): Record<string, unknown> {
  try {
    const parsed = JSON.parse(toolCall.function.arguments) as unknown;
    return typeof parsed === 'object' && parsed !== null ? (parsed as Record<string, unknown>) : {};
  } catch {
    return {};
  }
}

/** The roles a delegation tool's schema allows (`delegations[].role`'s enum). */
function delegationTargets(parameters: Record<string, unknown> | undefined): string[] {
  type Schema = { properties?: Record<string, Schema>; items?: Schema; enum?: unknown[] };
  const role = (parameters as Schema | undefined)?.properties?.delegations?.items?.properties?.role;
  return (role?.enum ?? []).filter((value): value is string => typeof value === 'string');
}

/** Tokens as the demo counts them: about four characters each. */
const tokensOf = (value: unknown) => Math.max(1, Math.ceil(JSON.stringify(value ?? '').length / 4));

/**
 * A Chat Completions server on loopback (`POST /v1/chat/completions`, JSON or a server-sent event stream,
 * and `GET /v1/models`) that answers from `scriptedReply` and reports usage, so the tasks it works cost
 * what the price table says. No key is checked and nothing is forwarded anywhere.
 */
export async function startScriptedModel(port = 0): Promise<ScriptedModel> {
  let requests = 0;
  let counter = 0;
  const server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const pathname = new URL(request.url ?? '/', 'http://model').pathname;
      if (request.method === 'GET' && pathname === '/v1/models') {
        return json(response, 200, {
          object: 'list',
          data: [{ id: DEMO_MODEL, object: 'model', created: 0, owned_by: 'boardroom-demo' }],
        });
      }
      if (request.method !== 'POST' || pathname !== '/v1/chat/completions') {
        return json(response, 404, { error: { message: 'not found', type: 'invalid_request_error' } });
      }
      let body: {
        model?: string;
        messages?: Message[];
        tools?: OfferedTool[];
        stream?: boolean;
        stream_options?: { include_usage?: boolean };
      };
      try {
        body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
      } catch {
        return json(response, 400, {
          error: { message: 'the body is not JSON', type: 'invalid_request_error' },
        });
      }
      if (!Array.isArray(body.messages)) {
        return json(response, 400, {
          error: { message: 'messages is required', type: 'invalid_request_error' },
        });
      }
      requests += 1;
      counter += 1;
      const reply = scriptedReply(body.messages, body.tools ?? []);
      const promptTokens = tokensOf(body.messages) + tokensOf(body.tools);
      const completionTokens = tokensOf(reply.content) + tokensOf(reply.toolCalls);
      const usage = {
        prompt_tokens: promptTokens,
        completion_tokens: completionTokens,
        total_tokens: promptTokens + completionTokens,
      };
      const id = `chatcmpl-demo-${counter}`;
      const created = Math.floor(Date.now() / 1000);
      const model = body.model ?? DEMO_MODEL;
      const finish = reply.toolCalls.length > 0 ? 'tool_calls' : 'stop';
      const message = {
        role: 'assistant',
        content: reply.content,
        refusal: null,
        ...(reply.toolCalls.length > 0 ? { tool_calls: reply.toolCalls } : {}),
      };
      if (!body.stream) {
        return json(response, 200, {
          id,
          object: 'chat.completion',
          created,
          model,
          choices: [{ index: 0, message, finish_reason: finish, logprobs: null }],
          usage,
        });
      }
      response.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
      const chunk = (choices: unknown[], extra: Record<string, unknown> = {}) =>
        response.write(
          `data: ${JSON.stringify({ id, object: 'chat.completion.chunk', created, model, choices, ...extra })}\n\n`,
        );
      chunk([
        {
          index: 0,
          delta: {
            role: 'assistant',
            content: reply.content,
            ...(reply.toolCalls.length > 0
              ? { tool_calls: reply.toolCalls.map((call, index) => ({ index, ...call })) }
              : {}),
          },
          finish_reason: null,
        },
      ]);
      chunk([{ index: 0, delta: {}, finish_reason: finish }]);
      if (body.stream_options?.include_usage) chunk([], { usage });
      response.end('data: [DONE]\n\n');
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, '127.0.0.1', () => resolve());
  });
  const bound = server.address() as AddressInfo;
  return {
    baseURL: `http://127.0.0.1:${bound.port}/v1`,
    address: bound.address,
    get requests() {
      return requests;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

function json(response: ServerResponse, status: number, body: unknown) {
  response.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
}
