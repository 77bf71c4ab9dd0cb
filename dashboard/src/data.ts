import { AB_RESULTS_FIELDS, type AbTestResultsSummary, query } from './api.js';

export const ROLES = ['ceo', 'cfo', 'coo', 'cto', 'cmo', 'cpo', 'chro', 'clo'] as const;
export type Role = (typeof ROLES)[number];

export interface Vitals {
  tasksCompleted: number;
  tasksFailed: number;
  avgExecutionTimeSeconds: number | null;
  acceptanceRate: number | null;
  outcomeAccuracy: number | null;
  tokensUsed: number;
  costUsd: number;
}

export interface RoleState {
  role: Role;
  paused: boolean;
  pausedAt: string | null;
  pausedBy: string | null;
  vitals: Vitals | null;
}

export interface TaskCounts {
  pending: number;
  running: number;
  completed: number;
  failed: number;
  cancelled: number;
}

export interface ProductionModel {
  id: string;
  baseModel: string;
  versionNumber: number;
  provider: string;
  updatedAt: string;
}

export interface AbTestSummary {
  id: string;
  name: string;
  pValue: number | null;
  significant: boolean;
  alpha: number;
  observations: number;
}

const VITALS_FIELDS =
  'tasksCompleted tasksFailed avgExecutionTimeSeconds acceptanceRate outcomeAccuracy tokensUsed costUsd';

const ROLE_FIELDS = 'role paused pausedAt pausedBy';

/** One role's card: its state and vitals. */
const ROLE_QUERY = `query DashboardRole($role: String!) {
  agent(role: $role) { ${ROLE_FIELDS} }
  agentVitals(role: $role) { ${VITALS_FIELDS} }
}`;

const OVERVIEW_QUERY = `query DashboardOverview {
  agents { ${ROLE_FIELDS} }
  ${ROLES.map((role) => `${role}: agentVitals(role: "${role}") { ${VITALS_FIELDS} }`).join('\n  ')}
}`;

const QUEUE_QUERY = 'query DashboardQueue { taskCounts { pending running completed failed cancelled } }';

const MODELS_QUERY = `query DashboardModels {
  productionModels { id baseModel versionNumber provider updatedAt }
}`;

const AB_TESTS_QUERY = `query DashboardAbTests {
  abTests(status: running, first: 20) { nodes { id name } }
}`;

const AB_RESULTS_QUERY = `query DashboardAbResults($id: ID!) {
  abTestResults(testId: $id) { ${AB_RESULTS_FIELDS} }
}`;

/** A running test's card row from its results (those of a query or of an AbTestResultsChangedEvent). */
export function abTestSummary(id: string, name: string, results: AbTestResultsSummary): AbTestSummary {
  return {
    id,
    name,
    pValue: results.chiSquaredPValue,
    significant: results.significant,
    alpha: results.alpha,
    observations: results.variants.reduce((sum, variant) => sum + variant.observations, 0),
  };
}

type RoleRow = Omit<RoleState, 'vitals'>;

export async function loadRoles(token: string): Promise<RoleState[]> {
  const data = await query<{ agents: RoleRow[] } & Record<Role, Vitals>>(token, OVERVIEW_QUERY);
  return ROLES.map((role) => {
    const row = data.agents.find((agent) => agent.role === role);
    return {
      role,
      paused: row?.paused ?? false,
      pausedAt: row?.pausedAt ?? null,
      pausedBy: row?.pausedBy ?? null,
      vitals: data[role] ?? null,
    };
  });
}

/**
 * One role, read because of an event: the event id goes into the variables so the response cache, which
 * keys on them, never answers with a result stored before the event.
 */
export async function loadRole(token: string, role: Role, eventId?: string): Promise<RoleState> {
  const data = await query<{ agent: RoleRow | null; agentVitals: Vitals }>(token, ROLE_QUERY, {
    role,
    ...(eventId ? { readAfterEvent: eventId } : {}),
  });
  return {
    role,
    paused: data.agent?.paused ?? false,
    pausedAt: data.agent?.pausedAt ?? null,
    pausedBy: data.agent?.pausedBy ?? null,
    vitals: data.agentVitals,
  };
}

export async function loadQueue(token: string): Promise<TaskCounts> {
  return (await query<{ taskCounts: TaskCounts }>(token, QUEUE_QUERY)).taskCounts;
}

export async function loadModels(token: string): Promise<ProductionModel[]> {
  return (await query<{ productionModels: ProductionModel[] }>(token, MODELS_QUERY)).productionModels;
}

export async function loadAbTests(token: string): Promise<AbTestSummary[]> {
  const tests = (await query<{ abTests: { nodes: { id: string; name: string }[] } }>(token, AB_TESTS_QUERY))
    .abTests.nodes;
  return Promise.all(
    tests.map(async (test) => {
      const { abTestResults } = await query<{ abTestResults: AbTestResultsSummary }>(
        token,
        AB_RESULTS_QUERY,
        { id: test.id },
      );
      return abTestSummary(test.id, test.name, abTestResults);
    }),
  );
}
