import { randomUUID } from 'node:crypto';
import { canaryPoint } from '../../src/domain/agents/model-routing.js';
import { graphql } from '../../src/generated/graphql/index.js';
import type { Caller, TestApp } from '../support/app.js';
import { chat } from './agents-support.js';
import { promote, register } from './finetuning-support.js';

export const BindAgentModel = graphql(`
  mutation RoutingBind($role: String!, $baseModel: String) {
    bindAgentModel(role: $role, baseModel: $baseModel) {
      role
      baseModel
    }
  }
`);

export const ClaimRouted = graphql(`
  mutation RoutingClaimNext($role: String!) {
    claimNextTask(role: $role) {
      outcome
      task {
        id
        threadId
        modelVersion {
          id
          versionNumber
          deploymentStatus
        }
      }
      routing {
        choice
        baseModel
        modelVersionId
        sticky
      }
    }
  }
`);

export const ClaimRoutedTask = graphql(`
  mutation RoutingClaim($role: String!) {
    claimTask(role: $role) {
      id
      modelVersion {
        id
      }
    }
  }
`);

export const TaskVersion = graphql(`
  query RoutingTaskVersion($id: ID!) {
    task(id: $id) {
      id
      status
      modelVersion {
        id
        deploymentStatus
      }
    }
  }
`);

export const VersionOutcomes = graphql(`
  query RoutingOutcomes($baseModel: String!, $hours: Int) {
    modelVersions(baseModel: $baseModel) {
      id
      outcomes(hours: $hours) {
        hours
        windowStart
        windowEnd
        tasksCompleted
        tasksFailed
        failureRate
        acceptanceRate
        outcomeAccuracy
        decided
        accepted
        evaluated
        matched
        tokensUsed
        costUsd
        avgExecutionTimeSeconds
      }
    }
  }
`);

export interface RoutingTenant {
  operator: Caller;
  agent: Caller;
  tenantId: string;
}

/** An operator and an agent runtime of a new tenant. */
export async function routingTenant(t: TestApp, tenantId?: string): Promise<RoutingTenant> {
  const operator = await t.caller(['operator', 'chairman'], tenantId ? { tenantId } : {});
  const agent = await t.caller(['agent'], { tenantId: operator.tenantId, sub: `agent-${operator.sub}` });
  await t.app.services.tenants.ensure(operator.tenantId);
  return { operator, agent, tenantId: operator.tenantId };
}

/** A base model with one production version, bound to `role`. */
export async function boundLine(t: TestApp, tenant: RoutingTenant, role: string, baseModel = uniqueModel()) {
  const production = await register(t, tenant.operator, baseModel);
  await promote(t, tenant.operator, production);
  await bind(t, tenant.operator, role, baseModel);
  return { baseModel, production };
}

export const uniqueModel = () => `routed-${randomUUID().slice(0, 8)}`;

export async function bind(t: TestApp, caller: Caller, role: string, baseModel: string | null) {
  const result = await t.graphql(BindAgentModel, { role, baseModel }, caller);
  if (!result.data) throw new Error(JSON.stringify(result.errors));
  return result.data.bindAgentModel;
}

export async function claimRouted(t: TestApp, agent: Caller, role: string) {
  const result = await t.graphql(ClaimRouted, { role }, agent);
  if (!result.data) throw new Error(JSON.stringify(result.errors));
  return result.data.claimNextTask;
}

/** A chat task in a new thread, or in the thread given; returns the task and thread ids. */
export async function threadTask(t: TestApp, caller: Caller, role: string, threadId?: string) {
  const body = threadId ? { message: 'And then?', thread_id: threadId } : { message: 'Start' };
  const response = await chat(t, caller, role, body);
  if (response.status !== 202) throw new Error(`chat answered ${response.status}`);
  const taskId = response.body.data.task_id as string;
  const task = await t.db.prisma.task.findUniqueOrThrow({ where: { id: taskId } });
  if (!task.threadId) throw new Error('chat stored no thread');
  return { taskId, threadId: task.threadId };
}

/** Whether the routing rule sends a subject to the canary: the same arithmetic, stated on its own. */
export const takesCanary = (canaryId: string, subject: string, pct: number) =>
  canaryPoint(canaryId, subject) * 100 < pct;
