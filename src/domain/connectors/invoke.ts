import { recordAudit } from '../../audit.js';
import type { Config } from '../../config.js';
import { enqueueEvent } from '../../events/outbox.js';
import type { Connector, ConnectorCallApproval } from '../../generated/prisma/client.js';
import type { Logger } from '../../logger.js';
import type { Metrics } from '../../observability/metrics.js';
import type { RateLimiter } from '../../rate-limit.js';
import type { Actor } from '../actor.js';
import { countConnectorCall } from '../agents/breakers.js';
import { recordSteps } from '../agents/task-steps.js';
import { conflict, DomainError, Refusal } from '../errors.js';
import { isGated, type StoredApprovalPolicy } from './approval-policy.js';
import { requestCallApproval } from './call-approvals-store.js';
import type { ConnectorCallSlots } from './call-slots.js';
import { credentialRequestParts } from './credential-store.js';
import type { CredentialRequestParts, OAuth2TokenRequest } from './credentials.js';
import {
  type EgressClient,
  type EgressDeadline,
  EgressError,
  type EgressFailureReason,
  type EgressResponse,
} from './egress/index.js';
import {
  type BuiltRequest,
  buildRequest,
  type EndpointRef,
  findEndpoint,
  type InvocationInput,
} from './invoke-request.js';
import { checkAgainst, compileSchema } from './json-schema.js';
import { consumeConnectorCall } from './rate-limits.js';
import { parseRedactedJson, type Redact, redactorOf } from './redaction.js';
import { findConnector } from './store.js';
import type { StoredConnectorTemplate } from './template.js';

/** Response headers passed back to the caller; every other header (cookies, auth challenges, ...) is dropped. */
export const PASSED_RESPONSE_HEADERS: readonly string[] = [
  'content-type',
  'content-length',
  'content-language',
  'cache-control',
  'etag',
  'last-modified',
  'expires',
  'date',
  'retry-after',
  'location',
  'link',
  'x-request-id',
  'request-id',
  'x-ratelimit-limit',
  'x-ratelimit-remaining',
  'x-ratelimit-reset',
  'ratelimit',
  'ratelimit-limit',
  'ratelimit-remaining',
  'ratelimit-reset',
  'ratelimit-policy',
  'x-total-count',
];

export interface ResponseValidation {
  valid: boolean;
  errors: { path: string; message: string }[];
}

export interface ConnectorInvocation {
  connectorId: string;
  method: string;
  path: string;
  status: number;
  headers: Record<string, string>;
  /** The body parsed as JSON when it parses, else its text; null when empty. */
  body: unknown;
  bytes: number;
  durationMs: number;
  redirects: number;
  /** Null when the endpoint has no `response_schema`. */
  responseValidation: ResponseValidation | null;
}

export interface ConnectorTestResult {
  connectorId: string;
  method: 'HEAD';
  url: string;
  status: number;
  durationMs: number;
}

/** What every call records: audit row, CONNECTOR_INVOKED event and metrics (never bodies or headers). */
interface CallRecord {
  kind: 'invoke' | 'test';
  connector: Connector;
  method: string;
  path: string;
  outcome: 'success' | 'upstream_error' | EgressFailureReason;
  status: number | null;
  durationMs: number;
  requestBytes: number;
  responseBytes: number;
}

function egressFailure(error: EgressError) {
  return new Refusal(error.code, `Connector call failed: ${error.message}`, {
    reason: error.reason,
  });
}

/**
 * The checks a connector must pass right before anything is sent. A disabled connector is never called.
 */
function assertReadyToSend(connector: Connector): void {
  if (connector.status !== 'active') {
    throw conflict(`Connector ${connector.id} is ${connector.status}; only active connectors are called`);
  }
}

/** What a connector call uses of the running instance. */
export interface ConnectorCallServices {
  config: Pick<Config, 'connectorCalls' | 'connectorSecretsKeys'>;
  /** The only way the call (and its OAuth token request) leaves the instance. */
  egress: EgressClient;
  /** Calls in flight per tenant. */
  connectorCalls: ConnectorCallSlots;
  /** The windows of the template's rate_limits. */
  rateLimiter: RateLimiter;
  metrics: Pick<Metrics, 'connectorCalls' | 'connectorCallDuration'>;
  logger: Logger;
}

export interface CallOptions {
  /**
   * Told once, right before the call first waits on an upstream (its OAuth token request or the call):
   * the request gives its place in the in-flight budget back there. Default: nothing.
   */
  beforeUpstream?: (() => void) | undefined;
}

/**
 * What every outbound request of one connector call shares: one deadline, CONNECTOR_CALL_TIMEOUT_MS from
 * its first request (its OAuth token request or the call), and one notice before that first wait.
 */
interface Upstream {
  /** Tells `beforeUpstream` (once) and answers the call's deadline, set on the first call. */
  beforeWaiting(): EgressDeadline;
}

function upstreamOf(services: ConnectorCallServices, options: CallOptions): Upstream {
  let deadline: EgressDeadline | undefined;
  return {
    beforeWaiting() {
      if (deadline) return deadline;
      const ms = services.config.connectorCalls.timeoutMs;
      deadline = { at: Date.now() + ms, ms };
      options.beforeUpstream?.();
      return deadline;
    },
  };
}

/** The OAuth 2.0 token request of a credential, sent through the same egress guard as the call itself. */
async function fetchAccessToken(
  services: ConnectorCallServices,
  request: OAuth2TokenRequest,
  upstream: Upstream,
) {
  const deadline = upstream.beforeWaiting();
  const response = await services.egress.send(request, { deadline }).catch((error: unknown) => {
    throw error instanceof EgressError ? egressFailure(error) : error;
  });
  return { status: response.status, body: parseBody(response.body).value };
}

/**
 * Everything that must hold before a call goes out, in this order: the connector is active; the tenant
 * has a connector call slot free (429 RATE_LIMITED with Retry-After otherwise); its stored credential,
 * when the auth type needs one, is bound to base_url's origin and opens (409 / 503 otherwise, and no call
 * of the template's rate_limits is spent on a misconfigured connector); a call is left in every window of
 * those limits (429 with Retry-After otherwise). Answers what the credential adds to the request and the
 * slot's release, which the caller must call once the upstream answered.
 */
async function prepareToSend(
  context: Actor,
  services: ConnectorCallServices,
  connector: Connector,
  upstream: Upstream,
): Promise<{ parts: CredentialRequestParts; release: () => void }> {
  assertReadyToSend(connector);
  const release = services.connectorCalls.take(connector.tenantId);
  try {
    const parts = await credentialRequestParts({ ...services, prisma: context.prisma }, connector, {
      fetchToken: (request) => fetchAccessToken(services, request, upstream),
    });
    await consumeConnectorCall(services, connector);
    return { parts, release };
  } catch (error) {
    release();
    throw error;
  }
}

/** The URL with the credential's query parameters (an api key sent as `?api_key=`). */
function withQuery(url: string, query: Record<string, string>): string {
  if (Object.keys(query).length === 0) return url;
  const target = new URL(url);
  for (const [name, value] of Object.entries(query)) target.searchParams.set(name, value);
  return target.href;
}

/**
 * Headers the HTTP client owns on every connector request (framing, connection, proxy, cookies): neither a
 * caller nor a stored credential may set them.
 */
export function isTransportHeader(name: string): boolean {
  const lower = name.toLowerCase();
  return TRANSPORT_HEADERS.has(lower) || lower.startsWith('proxy-');
}

const TRANSPORT_HEADERS: ReadonlySet<string> = new Set([
  'host',
  'content-length',
  'content-type',
  'transfer-encoding',
  'connection',
  'keep-alive',
  'upgrade',
  'te',
  'trailer',
  'expect',
  'accept-encoding',
  'cookie',
]);

/** Why a caller-supplied request header is refused, or null. */
export function checkCallerHeader(name: string): string | null {
  // Authorization is the stored credential's to set, never the caller's.
  if (isTransportHeader(name) || name.toLowerCase() === 'authorization') {
    return `the ${name.toLowerCase()} header is set by the service, not by the caller`;
  }
  return null;
}

/**
 * The headers sent to the connector's server, assembled in one place: the caller's allowed headers, the
 * credential's, then what the service sets (accept, content type, user agent), which the caller cannot
 * override.
 */
function outboundHeaders(
  callerHeaders: Record<string, string> | null | undefined,
  request: { hasBody: boolean; credential?: Record<string, string> },
): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(callerHeaders ?? {})) headers[name.toLowerCase()] = value;
  for (const [name, value] of Object.entries(request.credential ?? {})) headers[name.toLowerCase()] = value;
  headers['user-agent'] = 'boardroom-connector/1';
  headers.accept ??= 'application/json';
  if (request.hasBody) headers['content-type'] = 'application/json';
  return headers;
}

/** The response headers passed on, with the credential's secrets redacted (a `Location` that echoes a key). */
function safeHeaders(headers: EgressResponse['headers'], redact: Redact): Record<string, string> {
  const passed: Record<string, string> = {};
  for (const name of PASSED_RESPONSE_HEADERS) {
    const value = headers[name];
    if (value !== undefined) passed[name] = redact(Array.isArray(value) ? value.join(', ') : value);
  }
  return passed;
}

/**
 * The body as answered to the caller: `parsed` without secrets. An upstream that echoes the request (its
 * Authorization header, the key in its URL) gets the secret back; it is redacted in the text, and in a
 * JSON body in every string and key, however JSON escaped it.
 */
function answeredBody(bytes: Buffer, parsed: { value: unknown; json: boolean }, secrets: string[]): unknown {
  if (secrets.length === 0 || parsed.value === null) return parsed.value;
  const redact = redactorOf(secrets);
  return parsed.json ? parseRedactedJson(bytes.toString('utf8'), redact) : redact(parsed.value as string);
}

function parseBody(bytes: Buffer): { value: unknown; json: boolean } {
  if (bytes.length === 0) return { value: null, json: false };
  const text = bytes.toString('utf8');
  try {
    return { value: JSON.parse(text), json: true };
  } catch {
    return { value: text, json: false };
  }
}

function validateResponse(
  schema: Record<string, unknown> | undefined,
  body: { value: unknown; json: boolean },
): ResponseValidation | null {
  if (!schema) return null;
  const validate = compileSchema(schema);
  if (typeof validate === 'string') {
    return {
      valid: false,
      errors: [{ path: '', message: `response_schema is not a valid JSON Schema: ${validate}` }],
    };
  }
  if (!body.json) return { valid: false, errors: [{ path: '', message: 'the response body is not JSON' }] };
  const checked = checkAgainst(validate, body.value);
  if (checked.valid) return { valid: true, errors: [] };
  return {
    valid: false,
    errors: checked.problems.map((problem) => ({
      path: `/${[...problem.path, ...(problem.property !== undefined && problem.keyword === 'required' ? [problem.property] : [])].join('/')}`,
      message: problem.message,
    })),
  };
}

async function record(context: Actor, services: ConnectorCallServices, call: CallRecord): Promise<void> {
  const { metrics } = services;
  metrics.connectorCalls.inc({ kind: call.kind, outcome: call.outcome });
  metrics.connectorCallDuration.observe({ kind: call.kind, outcome: call.outcome }, call.durationMs / 1000);
  const details = {
    method: call.method,
    path: call.path,
    status: call.status,
    duration_ms: call.durationMs,
    request_bytes: call.requestBytes,
    response_bytes: call.responseBytes,
    connector_version: call.connector.version,
  };
  await context.prisma.$transaction(async (tx) => {
    await recordAudit(tx, context, {
      action: call.kind === 'invoke' ? 'connector.invoke' : 'connector.test',
      targetType: 'connector',
      targetId: call.connector.id,
      outcome: call.outcome,
      details,
    });
    await enqueueEvent(tx, {
      type: 'CONNECTOR_INVOKED',
      tenantId: call.connector.tenantId,
      payload: {
        connector_id: call.connector.id,
        kind: call.kind,
        method: call.method,
        path: call.path,
        outcome: call.outcome,
        status: call.status,
        duration_ms: call.durationMs,
        response_bytes: call.responseBytes,
        actor: context.viewer.sub,
        invoked_at: new Date().toISOString(),
      },
    });
  });
}

/**
 * Sends through the egress client, gives the call's slot back once the upstream answered (or failed), and
 * records the call, whatever its outcome.
 */
async function sendAndRecord(
  context: Actor,
  services: ConnectorCallServices,
  call: Pick<CallRecord, 'kind' | 'connector' | 'method' | 'path'>,
  request: { url: string; method: string; headers: Record<string, string>; body?: string },
  upstream: Upstream,
  release: () => void,
): Promise<{ response: EgressResponse; durationMs: number }> {
  const started = performance.now();
  const requestBytes = request.body === undefined ? 0 : Buffer.byteLength(request.body);
  const sent = services.egress.send(request, { deadline: upstream.beforeWaiting() });
  void sent.then(release, release);
  try {
    const response = await sent;
    const durationMs = Math.round(performance.now() - started);
    await record(context, services, {
      ...call,
      outcome: response.status < 400 ? 'success' : 'upstream_error',
      status: response.status,
      durationMs,
      requestBytes,
      responseBytes: response.body.length,
    });
    return { response, durationMs };
  } catch (error) {
    if (!(error instanceof EgressError)) throw error;
    await record(context, services, {
      ...call,
      outcome: error.reason,
      status: null,
      durationMs: Math.round(performance.now() - started),
      requestBytes,
      responseBytes: 0,
    });
    throw egressFailure(error);
  }
}

export interface InvokeCommand {
  id: string;
  endpoint: EndpointRef;
  input?: InvocationInput | null | undefined;
  /** The caller's running task the call is made for: counted by the repeated-call breaker. */
  taskId?: string | null | undefined;
}

/** What an invocation answers: the server's answer, or the request kept for a decision (a gated endpoint). */
export type InvocationOutcome =
  | ({ kind: 'invocation' } & ConnectorInvocation)
  | ({ kind: 'approval' } & ConnectorCallApproval);

/**
 * Calls one endpoint of a connector of the caller's tenant: the request is built from the stored template
 * and the caller's validated input. When the connector's approval policy gates the endpoint, the call is
 * kept (input sealed) for a decision and nothing is sent; otherwise it is checked, sent through the egress
 * client, recorded, and its response returned (a status of 400 or more from the server is a result, not
 * an error) without any value of the credential in it.
 */
export async function invokeConnector(
  context: Actor,
  services: ConnectorCallServices,
  command: InvokeCommand,
  options: CallOptions = {},
): Promise<InvocationOutcome> {
  const connector = await findConnector(context, command.id);
  const template = connector.template as unknown as StoredConnectorTemplate;
  const endpoint = findEndpoint(template, command.endpoint);
  const input = command.input ?? {};
  // Built once: the policy matches the request that would be sent, and an ungated call sends it.
  const built = buildRequest(template, endpoint, input);
  if (command.taskId) {
    await countConnectorCall(context, command.taskId, {
      connectorId: connector.id,
      method: endpoint.method,
      path: endpoint.path,
      query: input.query,
      body: input.body,
    });
  }
  const policy = connector.approvalPolicy as unknown as StoredApprovalPolicy | null;
  const endpointName = `${endpoint.method.toUpperCase()} ${endpoint.path}`;
  if (isGated(policy, { ...built, headers: input.headers })) {
    assertReadyToSend(connector);
    const approval = await requestCallApproval(
      context,
      services.config.connectorSecretsKeys,
      connector,
      command.endpoint,
      input,
      command.taskId ?? null,
    );
    if (command.taskId) {
      await recordSteps(context.prisma, context.viewer.tenantId, command.taskId, [
        {
          kind: 'approval_requested',
          actor: context.viewer.sub,
          approval_id: approval.id,
          connector_id: connector.id,
          endpoint: endpointName,
        },
      ]);
    }
    return { kind: 'approval', ...approval };
  }
  if (!command.taskId) {
    return { kind: 'invocation', ...(await send(context, services, connector, built, input, options)) };
  }
  // The run record's connector step: what the gateway saw of the call, never its bodies.
  const startedAt = new Date().toISOString();
  const step = { kind: 'connector_call' as const, actor: context.viewer.sub, started_at: startedAt };
  try {
    const invocation = await send(context, services, connector, built, input, options);
    await recordSteps(context.prisma, context.viewer.tenantId, command.taskId, [
      {
        ...step,
        connector_id: connector.id,
        endpoint: endpointName,
        http_status: invocation.status,
        bytes: invocation.bytes,
        duration_ms: invocation.durationMs,
        outcome: invocation.status < 400 ? 'success' : 'upstream_error',
      },
    ]);
    return { kind: 'invocation', ...invocation };
  } catch (error) {
    await recordSteps(context.prisma, context.viewer.tenantId, command.taskId, [
      {
        ...step,
        connector_id: connector.id,
        endpoint: endpointName,
        duration_ms: Date.now() - Date.parse(startedAt),
        outcome: 'failed',
        reason: error instanceof DomainError ? (error.reason ?? error.code) : 'internal_error',
      },
    ]);
    throw error;
  }
}

/**
 * Makes the approved call of `connector`'s endpoint with `input`, built and checked against the template
 * of `connector` as given (the version the request was checked against).
 */
export async function callEndpoint(
  context: Actor,
  services: ConnectorCallServices,
  connector: Connector,
  ref: EndpointRef,
  input: InvocationInput,
  options: CallOptions = {},
): Promise<ConnectorInvocation> {
  const template = connector.template as unknown as StoredConnectorTemplate;
  const built = buildRequest(template, findEndpoint(template, ref), input);
  return send(context, services, connector, built, input, options);
}

/** Sends a built request of `connector` (`prepareToSend`, `sendAndRecord`) and answers its response. */
async function send(
  context: Actor,
  services: ConnectorCallServices,
  connector: Connector,
  built: BuiltRequest,
  input: InvocationInput,
  options: CallOptions,
): Promise<ConnectorInvocation> {
  const { endpoint } = built;
  const upstream = upstreamOf(services, options);
  const { parts: credential, release } = await prepareToSend(context, services, connector, upstream);
  const redact = redactorOf(credential.secrets);
  let sent: Awaited<ReturnType<typeof sendAndRecord>>;
  try {
    sent = await sendAndRecord(
      context,
      services,
      { kind: 'invoke', connector, method: endpoint.method, path: endpoint.path },
      {
        url: withQuery(built.url, credential.query),
        method: built.method,
        headers: outboundHeaders(input.headers, {
          hasBody: built.body !== undefined,
          credential: credential.headers,
        }),
        ...(built.body !== undefined ? { body: built.body } : {}),
      },
      upstream,
      release,
    );
  } finally {
    release();
  }
  const { response, durationMs } = sent;
  const body = parseBody(response.body);
  const validation = validateResponse(endpoint.response_schema, body);
  return {
    connectorId: connector.id,
    method: endpoint.method,
    path: endpoint.path,
    status: response.status,
    headers: safeHeaders(response.headers, redact),
    body: answeredBody(response.body, body, credential.secrets),
    bytes: response.body.length,
    durationMs,
    redirects: response.redirects,
    responseValidation: validation && {
      valid: validation.valid,
      errors: validation.errors.map((error) => ({
        path: redact(error.path),
        message: redact(error.message),
      })),
    },
  };
}

/**
 * The cheap probe: a HEAD request to the connector's base_url, with the headers an invocation would carry.
 * Any HTTP answer means the server is reachable through the egress guard and its status is reported.
 */
export async function testConnector(
  context: Actor,
  services: ConnectorCallServices,
  id: string,
  options: CallOptions = {},
): Promise<ConnectorTestResult> {
  const connector = await findConnector(context, id);
  const template = connector.template as unknown as StoredConnectorTemplate;
  const upstream = upstreamOf(services, options);
  const { parts: credential, release } = await prepareToSend(context, services, connector, upstream);
  const url = new URL(template.base_url).href;
  let sent: Awaited<ReturnType<typeof sendAndRecord>>;
  try {
    sent = await sendAndRecord(
      context,
      services,
      { kind: 'test', connector, method: 'HEAD', path: new URL(url).pathname },
      {
        url: withQuery(url, credential.query),
        method: 'HEAD',
        headers: outboundHeaders({}, { hasBody: false, credential: credential.headers }),
      },
      upstream,
      release,
    );
  } finally {
    release();
  }
  const { response, durationMs } = sent;
  return { connectorId: connector.id, method: 'HEAD', url, status: response.status, durationMs };
}
