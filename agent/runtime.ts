import { setTimeout as sleep } from 'node:timers/promises';
import { UnauthorizedError } from '@modelcontextprotocol/sdk/client/auth.js';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import {
  StreamableHTTPClientTransport,
  StreamableHTTPError,
} from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { type CallToolResult, ErrorCode, McpError, type Tool } from '@modelcontextprotocol/sdk/types.js';
import OpenAI from 'openai';
import type { ChatCompletionMessageParam, ChatCompletionTool } from 'openai/resources/chat/completions';
import { z } from 'zod';
import {
  MAX_RECOMMENDATIONS,
  MAX_STEPS_PER_REPORT,
  recommendationRule,
} from '../src/domain/agents/completion-rules.js';
import { TASK_META_KEY } from '../src/domain/agents/task-meta.js';
import { addUsage, costOf, noUsage, type PriceTable, priceOf, type Usage } from './prices.js';
import { type AgentTelemetry, noTelemetry } from './telemetry.js';

export interface AgentOptions {
  /** Boardroom's base URL; the runtime speaks MCP to `<url>/mcp`. */
  boardroomUrl: string;
  /** A Boardroom bearer token with the `agent` role, of the tenant whose queue it works. */
  token: string;
  /** The agent role whose tasks it claims. */
  role: string;
  /** The OpenAI-compatible endpoint: its base URL (`…/v1`; default OpenAI's) and API key. */
  openai: { baseURL?: string; apiKey: string };
  /** The model asked for when the claimed task names none (no model version routed to it). */
  model: string;
  /** Prices per model (USD per million tokens): the cost reported with each completed task. */
  prices: PriceTable;
  /** Aborting stops the runtime: a task in progress is released (back to the queue) at once, and runAgent resolves. */
  signal: AbortSignal;
  /** The most model calls one task may take (each tool round is one). Default 8. */
  maxModelCalls?: number;
  /** Bounds of the jittered back-off when the queue is empty or the role paused. Default 1 s to 30 s. */
  idleBackoffMs?: { min: number; max: number };
  /** The longest wait for a budget's retry time before claiming again (a limit may be raised). Default 5 min. */
  budgetRecheckMs?: number;
  /** How often the lease of the task in progress is renewed. Default: a third of its length. */
  leaseRenewMs?: number;
  /** Seconds a claim waits for work on the server, when claim_next_task offers it (0 to 30). Default 25. */
  waitSeconds?: number;
  /** Where the runtime says what it does: one object per event. Default: JSON lines on standard error. */
  log?: (event: Record<string, unknown>) => void;
  /** GenAI spans and metrics (telemetry.ts). Default: none. */
  telemetry?: AgentTelemetry;
}

/** What one run did, for its caller (the CLI prints nothing of it; tests read it). */
export interface AgentSummary {
  completed: number;
  failed: number;
  /** Tasks given back to the queue unfinished because the runtime was stopped. */
  released: number;
  /** Tasks handed to other roles as sub-tasks: they come back to the queue once those have ended. */
  delegated: number;
}

const SYSTEM_PROMPT = (role: string) =>
  `You are the ${role.toUpperCase()} agent of a company run on Boardroom. Answer the task you are given. ` +
  'The tools reach the company’s connectors: search their endpoints, describe the ones you need, then call ' +
  'them. A call that waits for an approval was not made yet: say so rather than assume its result.';

interface ClaimedTask {
  id: string;
  message: string;
  threadId?: string | null;
  attempts?: number | null;
  leaseExpiresAt?: string | null;
  /** The model version Boardroom routed the task to, when the role has one bound. */
  modelVersion?: { baseModel: string } | null;
  /** Roles the task may be delegated to (absent when the server offers no delegation). */
  delegationTargets?: string[] | null;
  /** The sub-tasks it delegated, ended, when it comes back after delegating. */
  children?:
    | { id: string; role: string; status: string; output?: string | null; error?: string | null }[]
    | null;
}

interface Claim {
  outcome: 'claimed' | 'queue_empty' | 'role_paused' | 'role_budget_exhausted' | 'tenant_budget_exhausted';
  retryAt: string | null;
  task: ClaimedTask | null;
}

/**
 * The runtime's own function tool: each call records one recommendation, sent with the answer when the task
 * completes (checked by the rules `completeTask` applies, so a refusal reaches the model, not the task).
 */
const RECOMMEND_TOOL = 'boardroom_recommend';
const { $schema: _schema, ...recommendationSchema } = z.toJSONSchema(recommendationRule, { io: 'input' });
const recommendTool: ChatCompletionTool = {
  type: 'function',
  function: {
    name: RECOMMEND_TOOL,
    description:
      'Records one recommendation to the board, delivered with your answer when the task completes: a summary ' +
      '(1 to 2,000 characters) and, optionally, the outcome you predict if it is followed. Call once per ' +
      `recommendation (at most ${MAX_RECOMMENDATIONS}); they are kept only if you then answer.`,
    parameters: recommendationSchema,
  },
};

type RecommendationDraft = z.output<typeof recommendationRule>;

/** The answer to a boardroom_recommend call: recorded, or why not (the model may correct it). */
function recommend(recommendations: RecommendationDraft[], argumentsText: string): string {
  let args: unknown;
  try {
    args = argumentsText ? JSON.parse(argumentsText) : {};
  } catch {
    return JSON.stringify({ error: 'the arguments are not JSON' });
  }
  const parsed = recommendationRule.safeParse(args);
  if (!parsed.success) {
    return JSON.stringify({
      error: 'recommendation refused',
      detail: parsed.error.issues.map((issue) => ({ loc: issue.path, msg: issue.message })),
    });
  }
  if (recommendations.length >= MAX_RECOMMENDATIONS) {
    return JSON.stringify({ error: `at most ${MAX_RECOMMENDATIONS} recommendations per task` });
  }
  recommendations.push(parsed.data);
  return JSON.stringify({ recorded: true, recommendations: recommendations.length });
}

/**
 * The runtime's delegation tool, offered when the task may be delegated: the model names roles among the
 * task's targets; the runtime reports the usage so far through delegate_task and stops working the task,
 * which comes back with the sub-tasks' outputs.
 */
const DELEGATE_TOOL = 'boardroom_delegate';
const delegateTool = (targets: string[]): ChatCompletionTool => ({
  type: 'function',
  function: {
    name: DELEGATE_TOOL,
    description:
      'Hands parts of this task to other roles of the company, as sub-tasks: each a role, what it is asked and ' +
      'optionally the most it may cost (USD). You get the task back with their answers once they have all ' +
      'ended; then answer it. Call it once, with every sub-task.',
    parameters: {
      type: 'object',
      properties: {
        delegations: {
          type: 'array',
          minItems: 1,
          maxItems: 10,
          items: {
            type: 'object',
            properties: {
              role: { type: 'string', enum: targets },
              message: { type: 'string', minLength: 1 },
              costCapUsd: { type: 'number', minimum: 0 },
            },
            required: ['role', 'message'],
          },
        },
      },
      required: ['delegations'],
    },
  },
});

/** What the model reads of a task that comes back from its sub-tasks: each one's answer or error. */
function childrenReport(children: NonNullable<ClaimedTask['children']>): string {
  const lines = children.map(
    (child) =>
      `- ${child.role.toUpperCase()} (${child.status}): ${child.status === 'completed' ? (child.output ?? '') : (child.error ?? child.status)}`,
  );
  return `Your sub-tasks have ended:\n${lines.join('\n')}\nAnswer the task with their results.`;
}

/**
 * The tools of Boardroom's MCP endpoint the model is given: the connector surface, whose size does not grow
 * with the tenant's connectors (search the endpoints, describe the chosen ones, call one).
 */
const CONNECTOR_SURFACE = new Set([
  'search_connector_endpoints',
  'describe_connector_endpoints',
  'call_connector_endpoint',
]);
const isConnectorTool = (tool: Tool) => CONNECTOR_SURFACE.has(tool.name);

/** Pages of tools/list read at most for one task's tools. */
const MAX_TOOL_PAGES = 50;

const jittered = (attempt: number, { min, max }: { min: number; max: number }) => {
  const ceiling = Math.min(max, min * 2 ** attempt);
  return min + Math.random() * (ceiling - min);
};

/** An agent tool's error result: the GraphQL error's message, and its HTTP status when it has one. */
class ToolError extends Error {
  constructor(
    message: string,
    readonly status: number | undefined,
  ) {
    super(message);
  }
}

/** A refusal of the token, its role or the agent role asked for: claiming again cannot succeed. */
const isFatal = (error: unknown) =>
  error instanceof UnauthorizedError ||
  (error instanceof ToolError && (error.status === 401 || error.status === 403 || error.status === 404)) ||
  (error instanceof StreamableHTTPError && (error.code === 401 || error.code === 403));

const abortable = async (ms: number, signal: AbortSignal) => {
  try {
    await sleep(ms, undefined, { signal });
  } catch {}
};

/** The text of a tool's result, as the model reads it. */
function toolAnswer(result: CallToolResult & { structuredContent?: Record<string, unknown> }): string {
  const structured = result.structuredContent;
  if (result.isError) {
    const text = result.content.map((part) => (part.type === 'text' ? part.text : '')).join('\n');
    return JSON.stringify({ error: structured?.error ?? text });
  }
  if (structured && 'approval' in structured) {
    return JSON.stringify({
      pending_approval: structured.approval,
      note: 'The call was not made: it waits for an approval (HTTP 202). Do not assume its result.',
    });
  }
  return JSON.stringify(structured?.response ?? structured ?? result.content);
}

/** One model call as report_steps takes it. */
interface ModelStepReport {
  model: string;
  startedAt: string;
  durationMs: number;
  inputTokens: number;
  cachedInputTokens: number;
  outputTokens: number;
  reasoningTokens: number;
  costUsd: number;
  finishReason?: string;
}

/** An attempt's model calls not yet reported, and what all of its calls cost, in micro-dollars. */
interface RunSteps {
  pending: ModelStepReport[];
  micros: number;
}

/** Queues one model call for report_steps; returns its cost in whole micro-dollars (what it reports). */
function recordStep(
  run: RunSteps,
  call: {
    model: string;
    startedAt: Date;
    durationMs: number;
    usage: Usage;
    price: NonNullable<ReturnType<typeof priceOf>>;
    finishReason: string | null;
  },
): number {
  const micros = Math.round(costOf(call.price, call.usage) * 1e6);
  run.pending.push({
    model: call.model,
    startedAt: call.startedAt.toISOString(),
    durationMs: call.durationMs,
    inputTokens: call.usage.promptTokens,
    cachedInputTokens: Math.min(call.usage.cachedInputTokens, call.usage.promptTokens),
    outputTokens: call.usage.completionTokens,
    reasoningTokens: Math.min(call.usage.reasoningTokens, call.usage.completionTokens),
    costUsd: micros / 1e6,
    ...(call.finishReason ? { finishReason: call.finishReason } : {}),
  });
  return micros;
}

/**
 * Works the queue of one agent role until `signal` aborts: claims a task over MCP, answers it with an
 * OpenAI-compatible Chat Completions model that may call the tenant's connector tools (through Boardroom's
 * MCP endpoint, so approvals, budgets, rate limits and audit apply), and completes it with the output,
 * exact tokens and cost, or fails it with the model's error.
 */
export async function runAgent(options: AgentOptions): Promise<AgentSummary> {
  const { role, signal } = options;
  const log =
    options.log ?? ((event: Record<string, unknown>) => process.stderr.write(`${JSON.stringify(event)}\n`));
  const idle = options.idleBackoffMs ?? { min: 1000, max: 30_000 };
  const budgetRecheckMs = options.budgetRecheckMs ?? 5 * 60_000;
  const maxModelCalls = options.maxModelCalls ?? 8;
  const summary: AgentSummary = { completed: 0, failed: 0, released: 0, delegated: 0 };
  const telemetry = options.telemetry ?? noTelemetry;

  const mcp = new Client({ name: 'boardroom-agent', version: '0.1.0' });
  await mcp.connect(
    new StreamableHTTPClientTransport(new URL('/mcp', options.boardroomUrl), {
      requestInit: { headers: { authorization: `Bearer ${options.token}` } },
      fetch: telemetry.fetch,
    }),
  );
  const openai = new OpenAI({
    baseURL: options.openai.baseURL,
    apiKey: options.openai.apiKey,
    maxRetries: 1,
  });

  /** `taskId`: the task a connector tool is called for (its repeated calls trip the role's breaker). */
  const call = async (name: string, args: Record<string, unknown>, abort?: AbortSignal, taskId?: string) =>
    (await mcp.callTool(
      { name, arguments: args, ...(taskId ? { _meta: { [TASK_META_KEY]: taskId } } : {}) },
      undefined,
      {
        ...(abort ? { signal: abort } : {}),
        // A waiting claim holds the request up to its wait: more than the SDK's default of 60 s is never needed.
        timeout: 60_000,
      },
    )) as CallToolResult & {
      structuredContent?: Record<string, unknown>;
    };

  /** The whole tool list, page after page (the agent tools open the first one). */
  const everyTool = async () => {
    const tools: Tool[] = [];
    let cursor: string | undefined;
    for (let page = 0; page < MAX_TOOL_PAGES; page += 1) {
      const listed = await mcp.listTools(cursor ? { cursor } : undefined);
      tools.push(...listed.tools);
      cursor = listed.nextCursor;
      if (!cursor) break;
    }
    return tools;
  };

  /** The agent tools' failures are the runtime's: an error result becomes an exception. */
  const agentCall = async (name: string, args: Record<string, unknown>, abort?: AbortSignal) => {
    const result = await call(name, args, abort);
    if (result.isError) {
      const status = (result.structuredContent?.error as { status?: number } | undefined)?.status;
      throw new ToolError(`${name}: ${toolAnswer(result)}`, status);
    }
    return result.structuredContent ?? {};
  };

  let renewTool = false;
  let reportsUsage = false;
  let delegates = false;
  let reportsSteps = false;
  /** complete_task takes the model calls not yet reported (`steps`): one request instead of two. */
  let completesWithSteps = false;
  try {
    const tools = (await mcp.listTools()).tools;
    const claimTool = tools.find((tool) => tool.name === 'claim_next_task');
    if (!claimTool) throw new Error('the MCP endpoint offers no claim_next_task: is the token an agent’s?');
    const waitArgument = ['wait_seconds', 'waitSeconds'].find(
      (name) => claimTool.inputSchema.properties?.[name] !== undefined,
    );
    renewTool = tools.some((tool) => tool.name === 'renew_task_lease');
    delegates = tools.some((tool) => tool.name === 'delegate_task');
    reportsSteps = tools.some((tool) => tool.name === 'report_steps');
    const completeTool = tools.find((tool) => tool.name === 'complete_task');
    reportsUsage = completeTool?.inputSchema.properties?.usage !== undefined;
    completesWithSteps = reportsSteps && completeTool?.inputSchema.properties?.steps !== undefined;
    log({ event: 'started', role, model: options.model, waitForWork: Boolean(waitArgument) });

    const waitSeconds = waitArgument ? (options.waitSeconds ?? 25) : 0;
    let idleAttempt = 0;
    let lastOutcome: Claim['outcome'] | undefined;
    while (!signal.aborted) {
      let claim: Claim;
      const claimStarted = Date.now();
      // One controller per claim: the SDK keeps its listener on the signal it is given.
      const claimAbort = new AbortController();
      const stopClaim = () => claimAbort.abort(signal.reason);
      signal.addEventListener('abort', stopClaim, { once: true });
      const attempt = telemetry.attempt(role);
      try {
        claim = (
          await attempt.claiming(() =>
            agentCall(
              'claim_next_task',
              { role, ...(waitArgument ? { [waitArgument]: waitSeconds } : {}) },
              // Stopping answers a waiting claim at once; closing the client then ends its request.
              claimAbort.signal,
            ),
          )
        ).claimNextTask as Claim;
      } catch (error) {
        if (signal.aborted) break;
        // Boardroom unreachable, overloaded (503, 429) or refusing the claim: back off and claim again.
        if (isFatal(error)) throw error;
        log({ event: 'claim_failed', role, error: (error as Error).message });
        await abortable(jittered(idleAttempt, idle), signal);
        idleAttempt += 1;
        continue;
      } finally {
        signal.removeEventListener('abort', stopClaim);
      }
      if (claim.outcome === 'claimed' && claim.task) {
        idleAttempt = 0;
        lastOutcome = undefined;
        const task = claim.task;
        const model = task.modelVersion?.baseModel ?? options.model;
        const ended = await attempt.working(
          { taskId: task.id, threadId: task.threadId, attempts: task.attempts, model },
          () => work(task),
        );
        summary[ended] += 1;
        continue;
      }
      if (claim.outcome !== lastOutcome) {
        if (claim.outcome === 'role_paused') log({ event: 'paused', role });
        else if (claim.outcome !== 'queue_empty') {
          log({ event: 'waiting', role, outcome: claim.outcome, retryAt: claim.retryAt });
        }
        lastOutcome = claim.outcome;
      }
      // The server waited for work (woken by a queued task, a resume, a budget change): claim again at
      // once. A claim that came back well before its wait did not wait: back off as without one.
      if (waitArgument && Date.now() - claimStarted >= (waitSeconds * 1000) / 2) continue;
      if (claim.outcome.endsWith('budget_exhausted')) {
        const until = claim.retryAt ? Date.parse(claim.retryAt) - Date.now() : budgetRecheckMs;
        await abortable(Math.max(idle.min, Math.min(until, budgetRecheckMs)), signal);
        continue;
      }
      // queue_empty without a server-side wait, or role_paused (no retry time): bounded, jittered back-off.
      await abortable(jittered(idleAttempt, idle), signal);
      idleAttempt += 1;
    }
  } finally {
    await mcp.close();
    log({ event: 'stopped', role, ...summary });
  }
  return summary;

  /**
   * The usage a completion or a delegation reports: tokens, cost and, when the server takes it, the breakdown.
   * With the model calls reported as steps, the cost is exactly their micro-dollars' sum (the server checks).
   */
  function reported(usage: Usage, price: NonNullable<ReturnType<typeof priceOf>>, run: RunSteps) {
    return {
      tokensUsed: usage.promptTokens + usage.completionTokens,
      costUsd: reportsSteps ? run.micros / 1e6 : costOf(price, usage),
      ...(reportsUsage
        ? {
            usage: {
              inputTokens: usage.promptTokens,
              cachedInputTokens: Math.min(usage.cachedInputTokens, usage.promptTokens),
              outputTokens: usage.completionTokens,
              reasoningTokens: Math.min(usage.reasoningTokens, usage.completionTokens),
            },
          }
        : {}),
    };
  }

  async function work(task: ClaimedTask): Promise<'completed' | 'failed' | 'released' | 'delegated'> {
    // The model Boardroom routed the task to (a bound model version, canary or production), else the default.
    const model = task.modelVersion?.baseModel ?? options.model;
    log({ event: 'claimed', role, taskId: task.id, model });
    const modelAbort = new AbortController();
    const stop = () => modelAbort.abort(signal.reason);
    signal.addEventListener('abort', stop, { once: true });
    // Stopped while the claim was on its way: the task goes back at once.
    if (signal.aborted) stop();
    let renewal: NodeJS.Timeout | undefined;
    let renewing: Promise<void> = Promise.resolve();
    // Before the task ends: no renewal may reach it after (it would be refused, the task no longer running).
    const stopRenewal = async () => {
      clearInterval(renewal);
      await renewing;
    };
    const startRenewal = () => {
      if (!renewTool || !task.leaseExpiresAt) return;
      const every =
        options.leaseRenewMs ?? Math.max(1000, (Date.parse(task.leaseExpiresAt) - Date.now()) / 3);
      renewal = setInterval(() => {
        renewing = agentCall('renew_task_lease', { taskId: task.id }).then(
          () => log({ event: 'lease_renewed', taskId: task.id }),
          (error) => log({ event: 'renew_failed', taskId: task.id, error: String(error) }),
        );
      }, every);
    };
    startRenewal();
    let usage: Usage = noUsage();
    const run: RunSteps = { pending: [], micros: 0 };
    /**
     * Sends the model calls not yet reported (batched: one request per MAX_STEPS_PER_REPORT), all but the
     * last `keep` of them (those the completion carries).
     */
    const reportSteps = async (keep = 0) => {
      while (reportsSteps && run.pending.length > keep) {
        const count = Math.min(MAX_STEPS_PER_REPORT, run.pending.length - keep);
        await agentCall('report_steps', { taskId: task.id, steps: run.pending.slice(0, count) });
        run.pending.splice(0, count);
      }
    };
    try {
      const price = priceOf(options.prices, model);
      if (!price) throw new Error(`no price for the model ${model}: add it to AGENT_PRICES`);
      const connectorTools = (await everyTool()).filter(isConnectorTool);
      const functions: ChatCompletionTool[] = [
        ...connectorTools.map(
          (tool): ChatCompletionTool => ({
            type: 'function',
            function: {
              name: tool.name,
              description: tool.description ?? tool.title ?? tool.name,
              parameters: tool.inputSchema as Record<string, unknown>,
            },
          }),
        ),
        recommendTool,
      ];
      const targets = delegates ? (task.delegationTargets ?? []) : [];
      if (targets.length > 0) functions.push(delegateTool(targets));
      // The model may name any tool (a task's message can tell it to): only those offered here are run.
      const offered = new Set(connectorTools.map((tool) => tool.name));
      const recommendations: RecommendationDraft[] = [];
      const messages: ChatCompletionMessageParam[] = [
        { role: 'system', content: SYSTEM_PROMPT(role) },
        { role: 'user', content: task.message },
        ...(task.children && task.children.length > 0
          ? [{ role: 'user' as const, content: childrenReport(task.children) }]
          : []),
      ];
      for (let calls = 0; calls < maxModelCalls; calls += 1) {
        const startedAt = new Date();
        const started = performance.now();
        const completion = await telemetry.chat({ model, baseURL: openai.baseURL }, () =>
          openai.chat.completions.create(
            {
              model,
              messages,
              tools: functions,
            },
            { signal: modelAbort.signal },
          ),
        );
        usage = addUsage(usage, completion.usage);
        run.micros += recordStep(run, {
          model,
          startedAt,
          durationMs: Math.round(performance.now() - started),
          usage: addUsage(noUsage(), completion.usage),
          price,
          finishReason: completion.choices[0]?.finish_reason ?? null,
        });
        const message = completion.choices[0]?.message;
        if (!message) throw new Error('the model answered no choice');
        const toolCalls = (message.tool_calls ?? []).filter((toolCall) => toolCall.type === 'function');
        if (toolCalls.length === 0) {
          const { tokensUsed, costUsd, ...breakdown } = reported(usage, price, run);
          await stopRenewal();
          // The last model calls travel with the completion, recorded in its statement.
          await reportSteps(completesWithSteps ? MAX_STEPS_PER_REPORT : 0);
          const steps = completesWithSteps ? run.pending.splice(0) : [];
          try {
            await agentCall('complete_task', {
              taskId: task.id,
              output: message.content ?? '',
              tokensUsed,
              costUsd,
              ...breakdown,
              ...(recommendations.length > 0 ? { recommendations } : {}),
              ...(steps.length > 0 ? { steps } : {}),
            });
          } catch (error) {
            // A refused completion recorded nothing: the failure that follows reports them.
            run.pending.unshift(...steps);
            throw error;
          }
          log({
            event: 'completed',
            role,
            taskId: task.id,
            model,
            tokensUsed,
            costUsd,
            usage,
            recommendations: recommendations.length,
          });
          return 'completed';
        }
        messages.push({ role: 'assistant', content: message.content ?? null, tool_calls: toolCalls });
        let delegation: { args: Record<string, unknown>; answerAt: number } | undefined;
        for (const toolCall of toolCalls) {
          if (signal.aborted) throw new Error('stopped');
          let answer: string;
          if (toolCall.function.name === RECOMMEND_TOOL) {
            answer = recommend(recommendations, toolCall.function.arguments);
            log({ event: 'tool_called', taskId: task.id, tool: RECOMMEND_TOOL });
            messages.push({ role: 'tool', tool_call_id: toolCall.id, content: answer });
            continue;
          }
          if (toolCall.function.name === DELEGATE_TOOL && targets.length > 0 && !delegation) {
            // The delegation is made after this turn's other tools ran: it ends this attempt.
            try {
              const args = toolCall.function.arguments ? JSON.parse(toolCall.function.arguments) : {};
              delegation = {
                args: typeof args === 'object' && args !== null ? args : {},
                answerAt: messages.length,
              };
              answer = JSON.stringify({ delegating: true });
            } catch {
              answer = JSON.stringify({ error: 'the arguments are not JSON' });
            }
            messages.push({ role: 'tool', tool_call_id: toolCall.id, content: answer });
            continue;
          }
          if (!offered.has(toolCall.function.name)) {
            answer = JSON.stringify({
              error: `${toolCall.function.name} is not a tool offered for this task: call one of the tools you were given`,
            });
            log({ event: 'tool_refused', taskId: task.id, tool: toolCall.function.name });
            messages.push({ role: 'tool', tool_call_id: toolCall.id, content: answer });
            continue;
          }
          try {
            const args = toolCall.function.arguments ? JSON.parse(toolCall.function.arguments) : {};
            answer = toolAnswer(
              await telemetry.tool(
                { name: toolCall.function.name, callId: toolCall.id },
                () => call(toolCall.function.name, args, undefined, task.id),
                (result) => result.isError === true,
              ),
            );
          } catch (error) {
            // Arguments the tool refused (a JSON-RPC error) or that are not JSON: the model reads why.
            answer = JSON.stringify({ error: (error as Error).message });
          }
          log({ event: 'tool_called', taskId: task.id, tool: toolCall.function.name });
          messages.push({ role: 'tool', tool_call_id: toolCall.id, content: answer });
        }
        if (delegation) {
          // No renewal may reach the task once it waits; a refusal leaves it running: renew again.
          await stopRenewal();
          try {
            await reportSteps();
            await agentCall('delegate_task', {
              taskId: task.id,
              delegations: delegation.args.delegations,
              ...reported(usage, price, run),
            });
            log({ event: 'delegated', role, taskId: task.id, usage });
            return 'delegated';
          } catch (error) {
            // Refused by the rules (a role not allowed, a cycle, a cap above the room: invalid params): nothing
            // was written and the task is still this runtime's; the model reads why. Anything else fails it.
            if (!(error instanceof McpError && error.code === ErrorCode.InvalidParams)) throw error;
            startRenewal();
            messages[delegation.answerAt] = {
              role: 'tool',
              tool_call_id: (messages[delegation.answerAt] as { tool_call_id: string }).tool_call_id,
              content: JSON.stringify({ error: error.message }),
            };
            log({ event: 'delegation_refused', taskId: task.id, error: error.message });
          }
        }
      }
      throw new Error(`the model asked for tools on each of its ${maxModelCalls} calls without answering`);
    } catch (error) {
      const reason = signal.aborted
        ? `the agent runtime stopped (${String(signal.reason ?? 'aborted')}) before finishing the task`
        : error instanceof OpenAI.APIError || error instanceof OpenAI.APIConnectionError
          ? `model call failed: ${error.message}`
          : (error as Error).message;
      // Stopped before finishing: the task goes back to the queue for another runtime, its claim uncounted.
      if (signal.aborted) {
        try {
          await stopRenewal();
          await reportSteps().catch(() => {});
          await agentCall('release_task', { taskId: task.id });
          log({ event: 'released', role, taskId: task.id, reason, usage });
        } catch (releaseError) {
          log({ event: 'release_failed', taskId: task.id, error: (releaseError as Error).message });
        }
        return 'released';
      }
      try {
        await stopRenewal();
        await reportSteps().catch(() => {});
        await agentCall('fail_task', { taskId: task.id, error: reason.slice(0, 2000) });
      } catch (failError) {
        log({ event: 'fail_failed', taskId: task.id, error: (failError as Error).message });
      }
      log({ event: 'failed', role, taskId: task.id, error: reason, usage });
      return 'failed';
    } finally {
      if (renewal) clearInterval(renewal);
      signal.removeEventListener('abort', stop);
    }
  }
}
