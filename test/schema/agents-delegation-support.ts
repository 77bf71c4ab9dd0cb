import type { Caller, TestApp } from '../support/app.js';

/** What the delegation tests read of a task. */
export const TASK_FIELDS = `id role status message output error costUsd tokensUsed parentTaskId rootTaskId depth
  roleChain costCapUsd resumeOn claimedBy attempts`;

export const DELEGATE = `mutation Delegate($taskId: ID!, $input: DelegateTaskInput!) {
  delegateTask(taskId: $taskId, input: $input) {
    parent { ${TASK_FIELDS} }
    children { ${TASK_FIELDS} }
  }
}`;

export const CLAIM = `mutation Claim($role: String!) {
  claimNextTask(role: $role) {
    outcome
    task { ${TASK_FIELDS} delegationTargets children { ${TASK_FIELDS} } }
  }
}`;

export const COMPLETE = `mutation Complete($id: ID!, $input: CompleteTaskInput!) {
  completeTask(id: $id, input: $input) { ${TASK_FIELDS} }
}`;

export const FAIL = `mutation Fail($id: ID!, $error: String!) { failTask(id: $id, error: $error) { ${TASK_FIELDS} } }`;

export const CANCEL = `mutation Cancel($id: ID!, $reason: String) { cancelTask(id: $id, reason: $reason) { ${TASK_FIELDS} } }`;

export const TASK = `query Task($id: ID!) {
  task(id: $id) { ${TASK_FIELDS} treeCost { costUsd tokensUsed } children { ${TASK_FIELDS} } }
}`;

export const SET_REPORTING = `mutation SetReporting($role: String!, $input: AgentReportingInput!) {
  setAgentReporting(role: $role, input: $input) { role reportsTo delegatesAcross }
}`;

export const REGISTER = `mutation Register($input: RegisterAgentRoleInput!) {
  registerAgentRole(input: $input) { role reportsTo builtIn }
}`;

export interface TaskView {
  id: string;
  role: string;
  status: string;
  message: string;
  output: string | null;
  error: string | null;
  costUsd: number | null;
  tokensUsed: number | null;
  parentTaskId: string | null;
  rootTaskId: string;
  depth: number;
  roleChain: string[];
  costCapUsd: number | null;
  resumeOn: string | null;
  claimedBy: string | null;
  attempts: number;
}

/** A chairman, a member and an agent of one fresh tenant. */
export async function company(t: TestApp) {
  const chairman = await t.caller(['chairman']);
  await t.app.services.tenants.ensure(chairman.tenantId);
  const member = await t.caller(['member'], { tenantId: chairman.tenantId });
  const agent = await t.caller(['agent'], { tenantId: chairman.tenantId });
  return { chairman, member, agent, tenantId: chairman.tenantId };
}

/** Runs an operation and fails the test on any error. */
export async function ok<T = any>(
  t: TestApp,
  document: string,
  variables: Record<string, unknown>,
  caller: Caller,
): Promise<T> {
  const result = await t.graphql<any, Record<string, unknown>>(document, variables, caller);
  if (result.errors) throw new Error(`operation failed: ${JSON.stringify(result.errors)}`);
  return result.data as T;
}

/** Claims the next task of a role; fails the test when none is handed out. */
export async function claim(t: TestApp, agent: Caller, role: string) {
  const data = await ok(t, CLAIM, { role }, agent);
  const task = data.claimNextTask.task as
    | (TaskView & { delegationTargets: string[]; children: TaskView[] })
    | null;
  if (!task) throw new Error(`nothing to claim for ${role}: ${data.claimNextTask.outcome}`);
  return task;
}

export const delegate = (
  t: TestApp,
  agent: Caller,
  taskId: string,
  delegations: { role: string; message: string; costCapUsd?: number }[],
  extra: Record<string, unknown> = {},
) =>
  t.graphql<any, Record<string, unknown>>(
    DELEGATE,
    { taskId, input: { delegations, tokensUsed: 0, costUsd: 0, ...extra } },
    agent,
  );

export const complete = (
  t: TestApp,
  agent: Caller,
  id: string,
  output: string,
  costUsd: number,
  tokensUsed = 10,
) => ok(t, COMPLETE, { id, input: { output, costUsd, tokensUsed } }, agent);

/** Everything of a tenant a refusal must leave alone: tasks, audit rows and outbox events. */
export async function tenantRows(t: TestApp, tenantId: string) {
  const [tasks, audit, events] = await Promise.all([
    t.db.prisma.task.findMany({ where: { tenantId }, orderBy: { id: 'asc' } }),
    t.db.prisma.auditEntry.count({ where: { tenantId } }),
    t.db.prisma.outboxEvent.count({ where: { tenantId } }),
  ]);
  return { tasks, audit, events };
}
