import type { TypedDocumentNode } from '@graphql-typed-document-node/core';
import { graphql } from '../src/generated/graphql/index.js';

/**
 * An MCP tool of the agent face: a named GraphQL operation plus how the tool's arguments fill its variables,
 * as a REST route is. Roles, input rules and every other rule come from the GraphQL field it calls.
 */
// biome-ignore lint/suspicious/noExplicitAny: the table holds operations of every result and variable type
export interface AgentTool<Result = any, Variables = any> {
  /** MCP tool name: 1–128 characters of `A-Za-z0-9_-.`. */
  name: string;
  title: string;
  description: string;
  document: TypedDocumentNode<Result, Variables>;
  /**
   * Tool argument → the variable it fills, as a dotted path (`input.tokensUsed`). The argument's JSON Schema
   * (type, bounds, required) is the field's own zod rule at that path: adding an argument of the operation
   * to the tool is one line here.
   */
  arguments: Record<string, string>;
  /** Whether the tool only reads (MCP's `readOnlyHint`). */
  readOnly: boolean;
}

const defineTool = <Result, Variables>(tool: AgentTool<Result, Variables>) => tool;

const ClaimNextTask = graphql(`
  mutation McpClaimNextTask($role: String!, $waitSeconds: Int) {
    claimNextTask(role: $role, waitSeconds: $waitSeconds) {
      outcome
      retryAt
      task {
        id
        role
        status
        message
        threadId
        attempts
        leaseExpiresAt
        createdBy
        modelVersion {
          id
          baseModel
          provider
          versionNumber
          deploymentStatus
        }
        approval {
          id
          status
          summary
          payload
          note
          decidedBy
          decidedAt
        }
        attachments {
          id
          filename
          mimeType
          size
          sha256
        }
        costCapUsd
        depth
        delegationTargets
        children {
          id
          role
          status
          output
          error
          costUsd
        }
      }
      routing {
        choice
        baseModel
        modelVersionId
        sticky
      }
      budget {
        role
        period
        limitUsd
        spentUsd
        reservedUsd
        remainingUsd
        periodEnd
      }
    }
  }
`);

const RenewTaskLease = graphql(`
  mutation McpRenewTaskLease($id: ID!) {
    renewTaskLease(id: $id) {
      id
      status
      leaseExpiresAt
    }
  }
`);

const RequestTaskApproval = graphql(`
  mutation McpRequestTaskApproval($taskId: ID!, $input: TaskApprovalRequestInput!) {
    requestTaskApproval(taskId: $taskId, input: $input) {
      id
      taskId
      status
      summary
      createdAt
      expiresAt
    }
  }
`);

const CompleteTask = graphql(`
  mutation McpCompleteTask($id: ID!, $input: CompleteTaskInput!) {
    completeTask(id: $id, input: $input) {
      id
      role
      status
      tokensUsed
      costUsd
      usage {
        inputTokens
        cachedInputTokens
        outputTokens
        reasoningTokens
      }
      finishedAt
      recommendations {
        id
        summary
        predictedOutcome
      }
      deliverables {
        kind
        title
        sha256
        size
      }
    }
  }
`);

const FailTask = graphql(`
  mutation McpFailTask($id: ID!, $error: String!) {
    failTask(id: $id, error: $error) {
      id
      role
      status
      error
      finishedAt
    }
  }
`);

const DelegateTask = graphql(`
  mutation McpDelegateTask($taskId: ID!, $input: DelegateTaskInput!) {
    delegateTask(taskId: $taskId, input: $input) {
      parent {
        id
        status
        tokensUsed
        costUsd
      }
      children {
        id
        role
        status
        costCapUsd
      }
    }
  }
`);

const ReportSteps = graphql(`
  mutation McpReportSteps($taskId: ID!, $steps: [ModelStepInput!]!) {
    reportTaskSteps(taskId: $taskId, steps: $steps) {
      taskId
      attempt
      firstSeq
      lastSeq
      recorded
    }
  }
`);

const ReleaseTask = graphql(`
  mutation McpReleaseTask($id: ID!) {
    releaseTask(id: $id) {
      id
      role
      status
      attempts
    }
  }
`);

const ReadBudget = graphql(`
  query McpReadBudget($role: String) {
    budget(role: $role) {
      role
      period
      periodStart
      periodEnd
      limitUsd
      spentUsd
      reservedUsd
      remainingUsd
      limitTokens
      spentTokens
      reservedTokens
      remainingTokens
      warnedAt
      exhaustedAt
    }
  }
`);

const ReadVitalSigns = graphql(`
  query McpReadVitalSigns($role: String!) {
    agentVitals(role: $role) {
      agentRole
      periodStart
      periodEnd
      tasksCompleted
      tasksFailed
      tokensUsed
      costUsd
      avgExecutionTimeSeconds
      acceptanceRate
      outcomeAccuracy
    }
  }
`);

/** The tools every agent runtime uses, in the order tools/list shows them; connector tools follow. */
export const agentTools: AgentTool[] = [
  defineTool({
    name: 'claim_next_task',
    title: 'Claim the next task',
    description:
      'Takes the oldest pending task of an agent role under a 5-minute lease, reserving its budgets’ estimates. ' +
      '`outcome` is `claimed` with the task, or why nothing was handed out: `role_paused`, ' +
      '`tenant_budget_exhausted` / `role_budget_exhausted` (with the budget and `retryAt`) or `queue_empty`. ' +
      'A refusal changes nothing. With `waitSeconds` (0 to 30) it waits that long for claimable work instead of ' +
      'answering `queue_empty` at once: no polling needed. A task back from a decision carries it in `approval`. ' +
      'The task names the model version to use (`modelVersion`; `routing` says why). Agent role only.',
    document: ClaimNextTask,
    arguments: { role: 'role', waitSeconds: 'waitSeconds' },
    readOnly: false,
  }),
  defineTool({
    name: 'renew_task_lease',
    title: 'Renew a task’s lease',
    description:
      'Sets the lease of a task this agent holds to 5 minutes from now; call it every minute or two while ' +
      'working. Refused with CONFLICT (`task_not_running`, `lease_expired`: stop working on it) or FORBIDDEN ' +
      '(another agent holds it), changing nothing. Agent role only.',
    document: RenewTaskLease,
    arguments: { taskId: 'id' },
    readOnly: false,
  }),
  defineTool({
    name: 'request_task_approval',
    title: 'Ask for a decision',
    description:
      'Asks the chairman or an operator to decide before this agent acts on its running task: a summary (1 to ' +
      '2,000 characters), an optional JSON payload (at most 64 KiB) and how long to wait, expiresInSeconds ' +
      '(60 to 2,592,000; default 86,400). The task leaves this agent (awaiting_approval, lease and budget ' +
      'reservation released) and returns to the queue once decided, or once expired undecided, with the ' +
      'decision in `approval`. Agent role only.',
    document: RequestTaskApproval,
    arguments: {
      taskId: 'taskId',
      summary: 'input.summary',
      payload: 'input.payload',
      expiresInSeconds: 'input.expiresInSeconds',
    },
    readOnly: false,
  }),
  defineTool({
    name: 'complete_task',
    title: 'Complete a task',
    description:
      'Ends a task this agent claimed as completed, with its exact usage (tokensUsed, costUsd: charged to the ' +
      'budgets), its output, optional recommendations and an optional `usage` breakdown of tokensUsed ' +
      '(inputTokens + outputTokens = tokensUsed; cachedInputTokens ≤ inputTokens; reasoningTokens ≤ ' +
      'outputTokens), and `deliverables` as evidence (TEXT text, LINK url, FILE base64 data with mimeType): ' +
      'a role that requires one refuses a completion without (reason `deliverable_required`). `steps`: the ' +
      'model calls not yet sent with report_steps (as report_steps takes them), recorded before the completion ' +
      'in one request: the usage must then be exactly the sum of all the attempt’s. Agent role only.',
    document: CompleteTask,
    arguments: {
      taskId: 'id',
      output: 'input.output',
      tokensUsed: 'input.tokensUsed',
      costUsd: 'input.costUsd',
      usage: 'input.usage',
      recommendations: 'input.recommendations',
      deliverables: 'input.deliverables',
      steps: 'input.steps',
    },
    readOnly: false,
  }),
  defineTool({
    name: 'fail_task',
    title: 'Fail a task',
    description:
      'Ends a task this agent claimed as failed, at once, with the reason; its budget reservation is released. Agent role only.',
    document: FailTask,
    arguments: { taskId: 'id', error: 'error' },
    readOnly: false,
  }),
  defineTool({
    name: 'delegate_task',
    title: 'Delegate parts of a task',
    description:
      'Hands parts of a task this agent holds to other roles (one of the task’s `delegationTargets`): 1 to 10 ' +
      'sub-tasks, each a role, a message and an optional cost cap (USD). Reports the usage of this attempt ' +
      'so far (tokensUsed, costUsd, optional usage), charged now. The task then waits without a lease and is ' +
      'claimable again, with the sub-tasks’ outputs in `children`, once they have all ended (resumeOn ' +
      '`ALL_ENDED`) or one failed (`FIRST_FAILURE`): stop working on it. Refused with BAD_USER_INPUT and ' +
      '`reason` (`unknown_role`, `delegation_cycle` with the chain, `not_along_org_chart`, `depth_limit`, ' +
      '`cap_exceeds_room`), changing nothing. Agent role only.',
    document: DelegateTask,
    arguments: {
      taskId: 'taskId',
      delegations: 'input.delegations',
      resumeOn: 'input.resumeOn',
      tokensUsed: 'input.tokensUsed',
      costUsd: 'input.costUsd',
      usage: 'input.usage',
    },
    readOnly: false,
  }),
  defineTool({
    name: 'report_steps',
    title: 'Report model calls',
    description:
      'Records model calls of a task this agent holds in its run record, in order: 1 to 500 per call, each ' +
      'with its model, durationMs, inputTokens (cachedInputTokens ⊆ input), outputTokens (reasoningTokens ⊆ ' +
      'output), costUsd and finishReason; request/response bodies are kept (redacted) only when the tenant ' +
      'captures content. Report them before completing or delegating: the usage those report must then be ' +
      'exactly their sum (BAD_USER_INPUT `costs_do_not_add_up` otherwise). Agent role only.',
    document: ReportSteps,
    arguments: { taskId: 'taskId', steps: 'steps' },
    readOnly: false,
  }),
  defineTool({
    name: 'release_task',
    title: 'Give a task back',
    description:
      'Gives a task this agent holds back to the queue unfinished (the runtime is stopping): pending again, its ' +
      'lease and budget reservation released, the claim not counted against its attempts. Agent role only.',
    document: ReleaseTask,
    arguments: { taskId: 'id' },
    readOnly: false,
  }),
  defineTool({
    name: 'read_budget',
    title: 'Read a budget',
    description:
      'The budget of an agent role (or, without a role, of the tenant) for the current period: limit, spent, ' +
      'reserved and remaining, in US dollars and tokens; null when none is set.',
    document: ReadBudget,
    arguments: { role: 'role' },
    readOnly: true,
  }),
  defineTool({
    name: 'read_vital_signs',
    title: 'Read vital signs',
    description:
      'Vital signs of an agent role over the trailing 24 hours: tasks completed and failed, tokens, cost, mean ' +
      'execution time, acceptance rate and outcome accuracy (null when their denominator is 0).',
    document: ReadVitalSigns,
    arguments: { role: 'role' },
    readOnly: true,
  }),
];
