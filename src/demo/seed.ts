/**
 * Seeds the demo company through Boardroom's public API only (GraphQL and REST with a chairman's token),
 * exactly as a user would; run again, it finds what it made before and changes only what must change.
 */

export const DEMO_CONNECTOR_NAME = 'Demo ledger';
export const DEMO_ROUTINE_MESSAGE = 'Check the ledger for overdue invoices.';

/** The chats queued at each start, one per role with a runtime, and again every `interval` in turn. */
export const DEMO_CHATS: readonly { role: string; message: string }[] = [
  { role: 'ceo', message: 'Prepare the weekly board brief.' },
  { role: 'cfo', message: 'Pay the overdue invoice inv_1001 from Northwind.' },
  { role: 'coo', message: 'Plan next week’s supplier calls.' },
];

export class DemoApiError extends Error {}

/** A caller of one Boardroom instance with one token. */
export function apiClient(url: string, token: string) {
  const headers = { authorization: `Bearer ${token}`, 'content-type': 'application/json' };
  return {
    async graphql<T = unknown>(query: string, variables: Record<string, unknown> = {}): Promise<T> {
      const response = await fetch(`${url}/graphql`, {
        method: 'POST',
        headers,
        body: JSON.stringify({ query, variables }),
      });
      const body = (await response.json()) as { data?: T; errors?: { message: string }[] };
      if (body.errors?.length || !body.data) {
        throw new DemoApiError(
          `${query.trim().split(/[({]/)[0]}: ${body.errors?.map((error) => error.message).join('; ') ?? response.status}`,
        );
      }
      return body.data;
    },
    async rest(method: string, path: string, body?: unknown): Promise<unknown> {
      const response = await fetch(`${url}${path}`, {
        method,
        headers,
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      });
      const answer = await response.json().catch(() => null);
      if (!response.ok)
        throw new DemoApiError(`${method} ${path}: ${response.status} ${JSON.stringify(answer)}`);
      return answer;
    },
  };
}

export type ApiClient = ReturnType<typeof apiClient>;

const BUDGETS = [
  { period: 'month', limitUsd: '20', estimateUsd: '0.05' },
  { role: 'ceo', period: 'day', limitUsd: '2', estimateUsd: '0.05' },
  { role: 'cfo', period: 'day', limitUsd: '2', estimateUsd: '0.05' },
  { role: 'coo', period: 'day', limitUsd: '1', estimateUsd: '0.05' },
] as const;

const template = (baseUrl: string) => ({
  name: DEMO_CONNECTOR_NAME,
  baseUrl,
  authType: 'none',
  description: 'The demo company’s invoices and payments.',
  endpoints: [
    {
      method: 'GET',
      path: '/invoices',
      queryParams: { status: { type: 'string', enum: ['open', 'overdue', 'paid'] } },
    },
    {
      method: 'POST',
      path: '/payments',
      bodySchema: {
        type: 'object',
        properties: { invoiceId: { type: 'string' }, amountUsd: { type: 'number' } },
        required: ['invoiceId', 'amountUsd'],
      },
    },
  ],
  rateLimits: { perMinute: 60 },
});

/** A connector as the seed reads it. */
interface StoredConnector {
  id: string;
  name: string;
  version: number;
  template: { base_url?: string } | null;
  approvalPolicy: unknown;
}

export interface SeedResult {
  connectorId: string;
  routineId: string;
  /** What this run created (a second run on the same data creates nothing but the chats). */
  created: string[];
}

/**
 * Budgets for the tenant and each role, the ledger connector at `upstreamBaseUrl` with an approval policy
 * on payments, a routine for the CFO every minute, and one chat per role.
 */
export async function seedDemo(api: ApiClient, upstreamBaseUrl: string): Promise<SeedResult> {
  const created: string[] = [];
  for (const budget of BUDGETS) {
    await api.graphql(
      'mutation DemoBudget($input: SetBudgetInput!) { setBudget(input: $input) { period } }',
      {
        input: budget,
      },
    );
  }

  const { connectors } = await api.graphql<{ connectors: { nodes: StoredConnector[] } }>(
    'query DemoConnectors { connectors(first: 100) { nodes { id name version template approvalPolicy } } }',
  );
  let connector = connectors.nodes.find((node) => node.name === DEMO_CONNECTOR_NAME);
  if (!connector) {
    connector = (
      await api.graphql<{ createConnector: StoredConnector }>(
        'mutation DemoConnector($input: ConnectorInput!) { createConnector(input: $input) { id name version template approvalPolicy } }',
        {
          input: { template: template(upstreamBaseUrl) },
        },
      )
    ).createConnector;
    created.push('connector');
  } else if (connector.template?.base_url !== upstreamBaseUrl) {
    // The demo upstream listens on another port than last time: point the connector at it.
    connector = (
      await api.graphql<{ updateConnector: StoredConnector }>(
        'mutation DemoConnectorMoved($id: ID!, $input: ConnectorInput!) { updateConnector(id: $id, input: $input) { id name version template approvalPolicy } }',
        { id: connector.id, input: { template: template(upstreamBaseUrl) } },
      )
    ).updateConnector;
  }
  if (!connector) throw new DemoApiError('the demo connector could not be created');
  if (!connector.approvalPolicy) {
    await api.graphql(
      'mutation DemoPolicy($id: ID!, $policy: ConnectorApprovalPolicyInput) { setConnectorApprovalPolicy(id: $id, policy: $policy) { version } }',
      {
        id: connector.id,
        policy: {
          rules: [{ methods: ['POST'], path: '/v1/payments' }],
          approverRoles: ['chairman', 'operator'],
          expiresInSeconds: 86_400,
        },
      },
    );
    created.push('approval policy');
  }

  const { routines } = await api.graphql<{ routines: { nodes: { id: string; message: string }[] } }>(
    'query DemoRoutines { routines(role: "cfo", first: 100) { nodes { id message } } }',
  );
  let routineId = routines.nodes.find((routine) => routine.message === DEMO_ROUTINE_MESSAGE)?.id;
  if (!routineId) {
    routineId = (
      await api.graphql<{ createRoutine: { id: string } }>(
        'mutation DemoRoutine($input: CreateRoutineInput!) { createRoutine(input: $input) { id } }',
        {
          input: {
            role: 'cfo',
            cron: '* * * * *',
            timeZone: 'UTC',
            message: DEMO_ROUTINE_MESSAGE,
            costCapUsd: 0.5,
            catchUp: 'SKIP',
          },
        },
      )
    ).createRoutine.id;
    created.push('routine');
  }

  for (const chat of DEMO_CHATS) await queueChat(api, chat);
  return { connectorId: connector.id, routineId, created };
}

/** Queues one chat over REST (202), as `POST /api/v1/agents/{role}/chat` does for any client. */
export async function queueChat(api: ApiClient, chat: { role: string; message: string }): Promise<void> {
  await api.rest('POST', `/api/v1/agents/${chat.role}/chat`, { message: chat.message });
}
