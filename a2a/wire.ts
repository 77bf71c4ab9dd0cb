import {
  type Artifact,
  type Message,
  type Part,
  Role,
  type StreamResponse,
  type Task,
  TaskState,
} from '@a2a-js/sdk';
import { A2A_STATES } from '../src/domain/agents/a2a-states.js';
import type { A2aTaskFieldsFragment, TaskStatus } from '../src/generated/graphql/graphql.js';

/** States that share an A2A state with another of ours: a filter by that A2A state names the other. */
const SHARED: readonly TaskStatus[] = ['waiting', 'in_review'];

/** Our task state as A2A's (src/domain/agents/a2a-states.ts, the one mapping). */
export const a2aStateOf = (status: TaskStatus): TaskState => A2A_STATES[status];

const TERMINAL: readonly TaskState[] = [
  TaskState.TASK_STATE_COMPLETED,
  TaskState.TASK_STATE_FAILED,
  TaskState.TASK_STATE_CANCELED,
  TaskState.TASK_STATE_REJECTED,
];

/** Whether a task in this state has ended: no update follows. */
export const isTerminal = (status: TaskStatus): boolean => TERMINAL.includes(a2aStateOf(status));

/** Our task state an A2A state filters by (ListTasks); undefined for a state no task of ours is ever in. */
export function taskStatusOf(state: TaskState): TaskStatus | undefined {
  const found = Object.entries(A2A_STATES).find(
    ([status, mapped]) => mapped === state && !SHARED.includes(status as TaskStatus),
  );
  return found?.[0] as TaskStatus | undefined;
}

const textMessage = (messageId: string, role: Role, text: string, task: A2aTaskFieldsFragment): Message => ({
  messageId,
  contextId: task.threadId ?? '',
  taskId: task.id,
  role,
  parts: [
    { content: { $case: 'text', value: text }, metadata: undefined, filename: '', mediaType: 'text/plain' },
  ],
  metadata: undefined,
  extensions: [],
  referenceTaskIds: [],
});

/** What the agent says with a state: the decision it waits for, or why it failed. */
function statusMessage(task: A2aTaskFieldsFragment): Message | undefined {
  if (task.status === 'awaiting_approval' && task.approval) {
    return textMessage(
      `${task.id}:approval:${task.approval.id}`,
      Role.ROLE_AGENT,
      task.approval.summary,
      task,
    );
  }
  if (task.status === 'failed' && task.error) {
    return textMessage(`${task.id}:error`, Role.ROLE_AGENT, task.error, task);
  }
  return undefined;
}

type Deliverable = NonNullable<A2aTaskFieldsFragment['deliverables']>[number];

/** A deliverable as an A2A part: text as text, a link as a URL part, a file with its bytes, type and name. */
function deliverablePart(deliverable: Deliverable): Part | undefined {
  const metadata = { sha256: deliverable.sha256, size: deliverable.size };
  const part = (content: Part['content'], mediaType: string, filename = ''): Part => ({
    content,
    metadata,
    filename,
    mediaType,
  });
  switch (deliverable.kind) {
    case 'TEXT':
      return deliverable.text === null
        ? undefined
        : part({ $case: 'text', value: deliverable.text }, 'text/plain');
    case 'LINK':
      return deliverable.url === null ? undefined : part({ $case: 'url', value: deliverable.url }, '');
    case 'FILE':
      return deliverable.data === null
        ? undefined
        : part(
            { $case: 'raw', value: Buffer.from(deliverable.data, 'base64') },
            deliverable.mimeType ?? 'application/octet-stream',
            deliverable.filename ?? '',
          );
  }
}

/**
 * The deliverables the completion reported, in their order, one artifact each; read only where artifacts are
 * answered (the operations' `withArtifacts`).
 */
function deliverableArtifacts(task: A2aTaskFieldsFragment): Artifact[] {
  return (task.deliverables ?? []).flatMap((deliverable) => {
    const part = deliverablePart(deliverable);
    if (!part) return [];
    return [
      {
        artifactId: `${task.id}:deliverable:${deliverable.id}`,
        name: deliverable.title ?? `deliverable ${deliverable.position + 1}`,
        description: `A ${deliverable.kind.toLowerCase()} deliverable of the ${task.role}`,
        parts: [part],
        metadata: { kind: deliverable.kind, position: deliverable.position },
        extensions: [],
      },
    ];
  });
}

/** A completed task's output and its deliverables as its artifacts. */
function artifactsOf(task: A2aTaskFieldsFragment): Artifact[] {
  if (task.status !== 'completed') return [];
  if (task.output === null) return deliverableArtifacts(task);
  return [
    {
      artifactId: `${task.id}:output`,
      name: 'output',
      description: `The ${task.role}'s answer`,
      parts: [
        {
          content: { $case: 'text', value: task.output },
          metadata: undefined,
          filename: '',
          mediaType: 'text/plain',
        },
      ],
      metadata: undefined,
      extensions: [],
    },
    ...deliverableArtifacts(task),
  ];
}

/**
 * Our task as an A2A Task: its thread is its context (a task queued without a stored thread has its own id
 * as context), the message that queued it its history, its output its artifact.
 */
export function a2aTaskOf(task: A2aTaskFieldsFragment, historyLength?: number): Task {
  const contextId = task.threadId ?? task.id;
  const withContext = { ...task, threadId: contextId };
  const history =
    historyLength === 0 ? [] : [textMessage(`${task.id}:message`, Role.ROLE_USER, task.message, withContext)];
  return {
    id: task.id,
    contextId,
    status: {
      state: a2aStateOf(task.status),
      message: statusMessage(withContext),
      timestamp: task.finishedAt ?? task.startedAt ?? task.createdAt,
    },
    artifacts: artifactsOf(task),
    history,
    metadata: { role: task.role },
  };
}

/**
 * What a stream tells of one change of the task (TASK_UPDATED): the artifacts first when it completed, then
 * its status. The state is the change's own (`status`), even when the task has moved on since; the status
 * message and artifacts are the task's as it is now, told only when it is still in that state.
 */
export function streamEventsOf(
  status: TaskStatus,
  updatedAt: string,
  task: A2aTaskFieldsFragment,
): StreamResponse[] {
  const current = a2aTaskOf(task, 0);
  const same = task.status === status;
  const events: StreamResponse[] = [];
  if (same && status === 'completed') {
    for (const artifact of current.artifacts) {
      events.push({
        payload: {
          $case: 'artifactUpdate',
          value: {
            taskId: current.id,
            contextId: current.contextId,
            artifact,
            append: false,
            lastChunk: true,
            metadata: undefined,
          },
        },
      });
    }
  }
  events.push({
    payload: {
      $case: 'statusUpdate',
      value: {
        taskId: current.id,
        contextId: current.contextId,
        status: same
          ? current.status
          : { state: a2aStateOf(status), message: undefined, timestamp: updatedAt },
        metadata: undefined,
      },
    },
  });
  return events;
}
