import { randomUUID } from 'node:crypto';
import { readdir } from 'node:fs/promises';
import path from 'node:path';
import type { BusEvent, EventType } from '../../src/events/topics.js';
import { graphql } from '../../src/generated/graphql/index.js';
import type { Prisma } from '../../src/generated/prisma/client.js';
import type { Caller, TestApp } from '../support/app.js';

export const ChatMutation = graphql(`
  mutation AgentsChat($role: String!, $input: ChatMessageInput!) {
    sendChatMessage(role: $role, input: $input) {
      taskId
      agentRole
      status
      acknowledgment
      threadId
      createdAt
      task {
        id
        status
        message
        createdAt
      }
    }
  }
`);

export const ClaimTask = graphql(`
  mutation AgentsClaim($role: String!) {
    claimTask(role: $role) {
      id
      role
      status
      attempts
      claimedBy
      message
      threadId
      startedAt
      leaseExpiresAt
      attachments {
        position
        sha256
        mimeType
        filename
        size
        data
      }
    }
  }
`);

export const CompleteTask = graphql(`
  mutation AgentsComplete($id: ID!, $input: CompleteTaskInput!) {
    completeTask(id: $id, input: $input) {
      id
      role
      status
      tokensUsed
      costUsd
      output
      startedAt
      finishedAt
      leaseExpiresAt
      usage {
        inputTokens
        cachedInputTokens
        outputTokens
        reasoningTokens
      }
      recommendations {
        id
        summary
        predictedOutcome
        accepted
      }
    }
  }
`);

export const FailTask = graphql(`
  mutation AgentsFail($id: ID!, $error: String!) {
    failTask(id: $id, error: $error) {
      id
      status
      error
      finishedAt
    }
  }
`);

export const TaskQuery = graphql(`
  query AgentsTask($id: ID!) {
    task(id: $id) {
      id
      role
      status
      attempts
      claimedBy
      message
      threadId
      createdBy
      error
      finishedAt
      attachments {
        position
        sha256
        mimeType
        filename
        size
      }
    }
  }
`);

export const TaskAttachmentData = graphql(`
  query AgentsTaskAttachmentData($id: ID!) {
    task(id: $id) {
      attachments {
        data
      }
    }
  }
`);

export const TasksQuery = graphql(`
  query AgentsTasks($role: String, $status: TaskStatus, $first: Int, $after: String) {
    tasks(role: $role, status: $status, first: $first, after: $after) {
      nodes {
        id
        role
        status
      }
      nextCursor
    }
  }
`);

export const ThreadQuery = graphql(`
  query AgentsThread($id: ID!) {
    thread(id: $id) {
      id
      role
      createdBy
      messages {
        author
        body
        attachments {
          mimeType
          filename
        }
      }
      tasks {
        id
      }
    }
  }
`);

export const DecideRecommendation = graphql(`
  mutation AgentsDecide($id: ID!, $accepted: Boolean!) {
    decideRecommendation(id: $id, accepted: $accepted) {
      id
      accepted
      decidedAt
      decidedBy
    }
  }
`);

export const RecordOutcome = graphql(`
  mutation AgentsOutcome($id: ID!, $matched: Boolean!) {
    recordRecommendationOutcome(id: $id, matched: $matched) {
      id
      outcomeMatched
      outcomeRecordedAt
    }
  }
`);

export const AgentVitalsFields = graphql(`
  fragment AgentVitalsFields on AgentVitals {
    agentRole
    tasksCompleted
    tasksFailed
    avgExecutionTimeSeconds
    acceptanceRate
    outcomeAccuracy
    tokensUsed
    costUsd
    periodStart
    periodEnd
  }
`);

export const AgentVitalsQuery = graphql(`
  query AgentsVitalsGraphql($role: String!) {
    agentVitals(role: $role) {
      ...AgentVitalsFields
    }
  }
`);

export const TaskUpdated = graphql(`
  subscription AgentsTaskUpdated($role: String, $taskId: ID) {
    taskUpdated(role: $role, taskId: $taskId) {
      eventId
      tenantId
      taskId
      role
      status
      attempts
      task {
        id
        status
      }
    }
  }
`);

/** POST /api/v1/agents/{role}/chat. */
export const chat = (t: TestApp, caller: Caller, role: string, body: unknown) =>
  t.rest('POST', `/api/v1/agents/${role}/chat`, { caller, body });

/** A Task id queued through the chat route. */
export async function queueTask(
  t: TestApp,
  caller: Caller,
  role: string,
  message = 'Draft the board memo',
): Promise<string> {
  const response = await chat(t, caller, role, { message, persist_thread: false });
  if (response.status !== 202)
    throw new Error(`chat answered ${response.status}: ${JSON.stringify(response.body)}`);
  return response.body.data.task_id;
}

/** A member of a fresh tenant, its row ensured; each caller is its own response-cache session. */
export async function freshTenant(t: TestApp): Promise<Caller> {
  const caller = await t.caller(['member']);
  await t.app.services.tenants.ensure(caller.tenantId);
  return caller;
}

/** A fresh tenant, its row ensured, with a member who chats and an agent runtime (subject `agent-<member's>`). */
export async function memberAndAgent(t: TestApp) {
  const member = await t.caller(['member']);
  const agent = await t.caller(['agent'], { tenantId: member.tenantId, sub: `agent-${member.sub}` });
  await t.app.services.tenants.ensure(member.tenantId);
  return { member, agent };
}

/** memberAndAgent's tenant with a chairman and an operator, who decide task approvals. */
export async function approvalTenant(t: TestApp) {
  const { member, agent } = await memberAndAgent(t);
  const chairman = await t.caller(['chairman'], { tenantId: member.tenantId });
  const operator = await t.caller(['operator'], { tenantId: member.tenantId });
  return { member, agent, chairman, operator };
}

/** What a refused task-approval step must leave as it was: the task row, approvals, outbox and audit of the tenant. */
export async function approvalRows(t: TestApp, tenantId: string, taskId: string) {
  const prisma = t.db.prisma;
  return {
    task: await prisma.task.findUniqueOrThrow({ where: { id: taskId } }),
    approvals: await prisma.taskApproval.findMany({ where: { tenantId }, orderBy: { createdAt: 'asc' } }),
    outbox: await prisma.outboxEvent.count({ where: { tenantId } }),
    audit: await prisma.auditEntry.count({ where: { tenantId } }),
  };
}

export const HOUR = 60 * 60 * 1000;
export const ago = (ms: number) => new Date(Date.now() - ms);

/**
 * Task rows written straight into the database of `app()` (read when called: the app of a file's hooks),
 * for reads over a period such as the vitals.
 */
export function taskSeeder(app: () => TestApp) {
  const seedTask = (tenantId: string, role: string, data: Partial<Prisma.TaskUncheckedCreateInput>) =>
    app().db.prisma.task.create({ data: { tenantId, role, message: 'seeded', createdBy: 'seed', ...data } });
  /** A task that completed `hoursAgo` (fractional) after running for `seconds`. */
  const completed = (
    tenantId: string,
    role: string,
    hoursAgo: number,
    seconds: number,
    tokensUsed: number,
    costUsd: string,
  ) => {
    const finishedAt = ago(hoursAgo * HOUR);
    return seedTask(tenantId, role, {
      status: 'completed',
      attempts: 1,
      startedAt: new Date(finishedAt.getTime() - seconds * 1000),
      finishedAt,
      tokensUsed,
      costUsd,
    });
  };
  return { seedTask, completed };
}

/** Rows a chat request may leave behind in a tenant. */
export async function storedRows(t: TestApp, tenantId: string) {
  const prisma = t.db.prisma;
  const [tasks, threads, messages, attachments, outbox] = await Promise.all([
    prisma.task.count({ where: { tenantId } }),
    prisma.thread.count({ where: { tenantId } }),
    prisma.threadMessage.count({ where: { tenantId } }),
    prisma.attachment.count({ where: { tenantId } }),
    prisma.outboxEvent.count({ where: { tenantId } }),
  ]);
  return { tasks, threads, messages, attachments, outbox };
}

/** Every file under the app's DATA_DIR, relative to it. */
export async function filesUnder(directory: string): Promise<string[]> {
  const entries = await readdir(directory, { recursive: true, withFileTypes: true }).catch(() => []);
  return entries
    .filter((entry) => entry.isFile())
    .map((entry) => path.relative(directory, path.join(entry.parentPath, entry.name)))
    .sort();
}

export interface BusWatch {
  /** The first event not yet returned that `accept` takes, or a rejection after `timeoutMs`. */
  next(accept?: (payload: Record<string, unknown>) => boolean, timeoutMs?: number): Promise<BusEvent>;
  close(): Promise<void>;
}

/**
 * Subscribes to the bus for `type` in `tenantId` and resolves once the subscription receives events (over
 * Redis, subscribing is asynchronous): probe events are published until one comes back.
 */
export async function watchBus(t: TestApp, type: EventType, tenantId: string): Promise<BusWatch> {
  const bus = t.app.services.bus;
  const iterator = bus.subscribe(type, tenantId)[Symbol.asyncIterator]();
  const received: BusEvent[] = [];
  let wake: (() => void) | undefined;
  const arrival = (timeoutMs: number) =>
    new Promise<boolean>((resolve) => {
      const timer = setTimeout(() => resolve(false), timeoutMs);
      wake = () => {
        clearTimeout(timer);
        resolve(true);
      };
    });
  void (async () => {
    for (;;) {
      const result = await iterator.next();
      if (result.done) return;
      received.push(result.value);
      wake?.();
    }
  })();

  const probe = randomUUID();
  const probed = () => received.some((event) => event.payload.probe === probe);
  for (let round = 0; !probed(); round += 1) {
    if (round === 50) throw new Error(`the bus subscription for ${type} never became ready`);
    await bus.publish({ eventId: randomUUID(), type, tenantId, payload: { probe } });
    if (!probed()) await arrival(100);
  }
  let cursor = received.length;

  return {
    async next(accept = () => true, timeoutMs = 5000) {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        while (cursor < received.length) {
          const event = received[cursor++] as BusEvent;
          if (!('probe' in event.payload) && accept(event.payload)) return event;
        }
        const left = deadline - Date.now();
        if (left <= 0 || !(await arrival(left)))
          throw new Error(`no matching ${type} event within ${timeoutMs} ms`);
      }
    },
    async close() {
      await iterator.return?.();
    },
  };
}
