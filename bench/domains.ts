// The throughput cases: each names the request sent to the gateway (after making its fixtures through the
// API) and is measured against bare graphql-yoga answering `{ __typename }` in the same rounds.
import { recordSubjects, runningAbTest } from './experiments.js';
import type { LoadJob } from './load.js';
import type { LoadClient } from './measure.js';
import { type Gateway, mintCaller, restRequest, signCallers } from './servers.js';

const json = { 'content-type': 'application/json' };
const TYPENAME = JSON.stringify({ query: '{ __typename }' });

export interface ThroughputCase {
  id: string;
  title: string;
  connections: number;
  /** Shortest measured run: long enough for many of its slowest responses to complete. */
  minSeconds?: number;
  /** Also report the ratio of PGlite to PostgreSQL, measured in the same rounds. */
  compareDatabases?: boolean;
  prepare(gateway: Gateway, client: LoadClient): Promise<LoadJob>;
}

export function baselineJob(url: string, connections: number): LoadJob {
  return { url: `${url}/graphql`, method: 'POST', headers: json, body: TYPENAME, connections };
}

const bearer = (token: string) => ({ authorization: `Bearer ${token}` });

export const throughputCases: ThroughputCase[] = [
  {
    id: 'typename',
    title: '{ __typename } with a token',
    connections: 16,
    async prepare(gateway) {
      const caller = await mintCaller();
      return { ...baselineJob(gateway.url, 16), headers: { ...json, ...bearer(caller.token) } };
    },
  },
  {
    id: 'db-read',
    title: '{ me { sub } agents { role } } (reads the database)',
    connections: 16,
    compareDatabases: true,
    async prepare(gateway) {
      const caller = await mintCaller();
      return {
        url: `${gateway.url}/graphql`,
        method: 'POST',
        headers: { ...json, ...bearer(caller.token) },
        body: JSON.stringify({ query: '{ me { sub } agents { role } }' }),
        connections: 16,
      };
    },
  },
  {
    id: 'vitals-cached',
    title: 'GET /api/v1/agents/cfo/vitals, one caller (cached 2 s)',
    connections: 16,
    async prepare(gateway) {
      const caller = await mintCaller();
      await queueChats(gateway, caller.token, 200);
      return {
        url: `${gateway.url}/api/v1/agents/cfo/vitals`,
        method: 'GET',
        headers: bearer(caller.token),
        connections: 16,
      };
    },
  },
  {
    id: 'vitals-uncached',
    title: 'GET /api/v1/agents/cfo/vitals, a new caller each request',
    connections: 16,
    async prepare(gateway) {
      const caller = await mintCaller();
      await queueChats(gateway, caller.token, 200);
      // The cache is per caller (2 s): cycling through 20,000 callers of the tenant misses it every time.
      const tokens = await signCallers(caller.tenantId, 20_000);
      return {
        url: `${gateway.url}/api/v1/agents/cfo/vitals`,
        method: 'GET',
        headers: {},
        connections: 16,
        rotateAuthorization: tokens.map((token) => `Bearer ${token}`),
      };
    },
  },
  {
    id: 'chat',
    title: 'POST /api/v1/agents/cfo/chat (202, task queued), 50 connections',
    connections: 50,
    minSeconds: 5,
    compareDatabases: true,
    async prepare(gateway) {
      const caller = await mintCaller();
      return {
        url: `${gateway.url}/api/v1/agents/cfo/chat`,
        method: 'POST',
        headers: { ...json, ...bearer(caller.token) },
        body: JSON.stringify({ message: 'Summarise the quarter', persist_thread: false }),
        connections: 50,
      };
    },
  },
  {
    id: 'ab-results',
    title: 'GET /api/v1/ux/ab-tests/{id}/results (10,000 subjects)',
    connections: 16,
    async prepare(gateway, client) {
      const caller = await mintCaller();
      const testId = await runningAbTest(gateway, caller);
      const recorded = await recordSubjects(client, gateway, caller, testId, 10);
      if (recorded.failures > 0) throw new Error(`recording A/B events failed: ${JSON.stringify(recorded)}`);
      return {
        url: `${gateway.url}/api/v1/ux/ab-tests/${testId}/results`,
        method: 'GET',
        headers: bearer(caller.token),
        connections: 16,
      };
    },
  },
];

/** Queues chat tasks for the CFO, so that vitals read real rows. */
async function queueChats(gateway: Gateway, token: string, count: number): Promise<void> {
  const caller = { tenantId: '', sub: '', token };
  for (let i = 0; i < count; i += 20) {
    await Promise.all(
      Array.from({ length: Math.min(20, count - i) }, (_, k) =>
        restRequest(gateway, caller, 'POST', '/api/v1/agents/cfo/chat', { message: `fixture ${i + k}` }, 202),
      ),
    );
  }
}

/** One operation over two transports of the same gateway, measured in the same interleaved rounds. */
export interface TransportCase {
  id: string;
  title: string;
  connections: number;
  minSeconds?: number;
  prepare(gateway: Gateway): Promise<{ rest: LoadJob; graphql: LoadJob }>;
}

/** A 4 MiB PDF (its signature, then ASCII), so that the same bytes travel as a string body either way. */
const ATTACHMENT = `%PDF-1.4\n${'x'.repeat(4 * 1024 * 1024 - 9)}`;
const CHAT_MESSAGE = 'Summarise the attached quarter';

function multipartChat(boundary: string): string {
  const operations = JSON.stringify({
    query:
      'mutation SendChatMessage($role: String!, $input: ChatMessageInput!) { sendChatMessage(role: $role, input: $input) { taskId agentRole status acknowledgment } }',
    variables: {
      role: 'cfo',
      input: {
        message: CHAT_MESSAGE,
        persistThread: false,
        attachments: [{ file: null, mimeType: 'application/pdf', filename: 'quarter.pdf' }],
      },
    },
  });
  const map = JSON.stringify({ 0: ['variables.input.attachments.0.file'] });
  return [
    `--${boundary}\r\nContent-Disposition: form-data; name="operations"\r\n\r\n${operations}\r\n`,
    `--${boundary}\r\nContent-Disposition: form-data; name="map"\r\n\r\n${map}\r\n`,
    `--${boundary}\r\nContent-Disposition: form-data; name="0"; filename="quarter.pdf"\r\nContent-Type: application/pdf\r\n\r\n${ATTACHMENT}\r\n`,
    `--${boundary}--\r\n`,
  ].join('');
}

export const transportCases: TransportCase[] = [
  {
    id: 'chat-4mib',
    title: 'chat with a 4 MiB attachment: REST (base64 in JSON) / GraphQL (multipart file), 4 connections',
    connections: 4,
    minSeconds: 5,
    async prepare(gateway) {
      const caller = await mintCaller();
      const boundary = 'benchboundary7MA4YWxkTrZu0gW';
      return {
        rest: {
          url: `${gateway.url}/api/v1/agents/cfo/chat`,
          method: 'POST',
          headers: { ...json, ...bearer(caller.token) },
          body: JSON.stringify({
            message: CHAT_MESSAGE,
            persist_thread: false,
            attachments: [
              {
                data: Buffer.from(ATTACHMENT).toString('base64'),
                mime_type: 'application/pdf',
                filename: 'quarter.pdf',
              },
            ],
          }),
          connections: 4,
        },
        graphql: {
          url: `${gateway.url}/graphql`,
          method: 'POST',
          headers: { 'content-type': `multipart/form-data; boundary=${boundary}`, ...bearer(caller.token) },
          body: multipartChat(boundary),
          connections: 4,
        },
      };
    },
  },
  {
    id: 'vitals-transports',
    title: 'CFO vitals, one caller (cached 2 s): GET /api/v1/agents/cfo/vitals / the same GraphQL query',
    connections: 16,
    async prepare(gateway) {
      const caller = await mintCaller();
      await queueChats(gateway, caller.token, 200);
      return {
        rest: {
          url: `${gateway.url}/api/v1/agents/cfo/vitals`,
          method: 'GET',
          headers: bearer(caller.token),
          connections: 16,
        },
        graphql: {
          url: `${gateway.url}/graphql`,
          method: 'POST',
          headers: { ...json, ...bearer(caller.token) },
          body: JSON.stringify({
            query:
              'query AgentVitals($role: String!) { agentVitals(role: $role) { agent_role: agentRole tasks_completed: tasksCompleted tasks_failed: tasksFailed avg_execution_time_seconds: avgExecutionTimeSeconds acceptance_rate: acceptanceRate outcome_accuracy: outcomeAccuracy tokens_used: tokensUsed cost_usd: costUsd period_start: periodStart period_end: periodEnd } }',
            operationName: 'AgentVitals',
            variables: { role: 'cfo' },
          }),
          connections: 16,
        },
      };
    },
  },
];
