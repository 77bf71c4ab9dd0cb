import { z } from 'zod';
import { builder } from '../builder.js';
import { hearsOf } from '../domain/agents/role-binding.js';
import { type RecordedEvent, recentEvents } from '../events/history.js';
import type { EventStream } from '../events/replay.js';
import { EVENT_TYPES, type EventType } from '../events/topics.js';
import { TASK_APPROVAL_EVENT_TYPES, TaskApprovalEvent } from './agents/approvals.js';
import { BudgetAlertEvent, BudgetChangedEvent } from './agents/budgets.js';
import { TaskStepsRecordedEvent, TaskUpdatedEvent } from './agents/subscriptions.js';
import { graphqlArg, zodField, zodSubscription } from './args.js';
import {
  APPROVAL_EVENT_TYPES,
  ConnectorCallApprovalEvent,
  seesApprovalEvent,
} from './connectors/approvals.js';
import { ConnectorInvokedEvent } from './connectors/calls.js';
import { ConnectorChangedEvent } from './connectors/changes.js';
import { AgentPausedEvent, AgentResumedEvent } from './dogfood.js';
import { afterArg, eventStream } from './event-stream.js';
import { AbTestResultsChangedEvent } from './experiments/events.js';
import { ModelVersionChangedEvent } from './finetuning.js';
import { WebhookDisabledEvent } from './webhooks.js';

const EventTypeEnum = builder.enumType('EventType', {
  description: 'The kinds of durable events a tenant’s stream carries.',
  values: EVENT_TYPES,
});

/** The first message of an `events` subscription. */
interface StreamStarted {
  type: 'STREAM_STARTED';
  position: string;
}

const EventStreamStarted = builder.objectRef<StreamStarted>('EventStreamStarted').implement({
  description:
    'The first message of every `events` subscription: where the stream starts. Keep `position` as the ' +
    'resume point until an event arrives (then keep its eventId): `events(after: position)` resumes ' +
    'exactly here, whether or not an event came. A client that reads its state after this message misses ' +
    'nothing between the read and the stream.',
  fields: (t) => ({
    position: t.exposeID('position', {
      description:
        'Opaque: the `after` given, or the position of the moment the stream began. Expires like an ' +
        'event id, with the replay window.',
    }),
  }),
});

const objectOf: Record<EventType | StreamStarted['type'], string> = {
  STREAM_STARTED: 'EventStreamStarted',
  DOGFOOD_AGENT_PAUSED: 'AgentPausedEvent',
  DOGFOOD_AGENT_RESUMED: 'AgentResumedEvent',
  TASK_UPDATED: 'TaskUpdatedEvent',
  TASK_STEPS_RECORDED: 'TaskStepsRecordedEvent',
  MODEL_VERSION_CHANGED: 'ModelVersionChangedEvent',
  CONNECTOR_INVOKED: 'ConnectorInvokedEvent',
  CONNECTOR_CHANGED: 'ConnectorChangedEvent',
  CONNECTOR_CALL_APPROVAL_REQUESTED: 'ConnectorCallApprovalEvent',
  CONNECTOR_CALL_APPROVAL_DECIDED: 'ConnectorCallApprovalEvent',
  AB_TEST_RESULTS_CHANGED: 'AbTestResultsChangedEvent',
  BUDGET_WARNING: 'BudgetAlertEvent',
  BUDGET_EXHAUSTED: 'BudgetAlertEvent',
  BUDGET_CHANGED: 'BudgetChangedEvent',
  WEBHOOK_DISABLED: 'WebhookDisabledEvent',
  TASK_APPROVAL_REQUESTED: 'TaskApprovalEvent',
  TASK_APPROVAL_DECIDED: 'TaskApprovalEvent',
};

const TenantEvent = builder.unionType('TenantEvent', {
  description:
    'A message of the tenant’s stream: first an EventStreamStarted, then events, each with an eventId to ' +
    'resume after.',
  types: [
    EventStreamStarted,
    AgentPausedEvent,
    AgentResumedEvent,
    TaskUpdatedEvent,
    TaskStepsRecordedEvent,
    ModelVersionChangedEvent,
    ConnectorInvokedEvent,
    ConnectorChangedEvent,
    ConnectorCallApprovalEvent,
    AbTestResultsChangedEvent,
    BudgetAlertEvent,
    BudgetChangedEvent,
    WebhookDisabledEvent,
    TaskApprovalEvent,
  ],
  resolveType: (payload) => objectOf[(payload as unknown as { type: EventType }).type],
});

type Message = { payload: Record<string, unknown> };

/** The stream, led by its EventStreamStarted message. */
function startingWithPosition(stream: EventStream): AsyncIterableIterator<Message> {
  let started = false;
  const position: StreamStarted = { type: 'STREAM_STARTED', position: stream.start ?? '' };
  const messages: AsyncIterableIterator<Message> = {
    next() {
      if (started) return stream.next();
      started = true;
      return Promise.resolve({ value: { payload: { ...position } }, done: false });
    },
    return: () => stream.return?.() ?? Promise.resolve({ value: undefined, done: true }),
    [Symbol.asyncIterator]: () => messages,
  };
  return messages;
}

/** Connector call and task decision events: the approvers', and each requesting agent's own. */
const isApprovalEvent = (type: EventType) =>
  (APPROVAL_EVENT_TYPES as readonly string[]).includes(type) ||
  (TASK_APPROVAL_EVENT_TYPES as readonly string[]).includes(type);

/** `types`: the event types wanted, each type when none are given. */
const typesArg = graphqlArg(z.array(graphqlArg(z.enum(EVENT_TYPES), { type: EventTypeEnum })).nullish(), {
  description: 'Default: every type.',
});

const eventsArgs = z.object({ types: typesArg, after: afterArg });

builder.subscriptionField('events', (t) =>
  t.withAuth({ authenticated: true }).field({
    type: TenantEvent,
    description:
      'Every event of the subscriber’s tenant (or of the given types) in commit order: pauses, resumes, ' +
      'task updates and recorded steps, model version changes, connector changes and calls, A/B results, budget alerts and changes, led by an ' +
      'EventStreamStarted message. Resumable with `after`.',
    ...zodSubscription(t, eventsArgs, async (_root, { types, after }, context) => {
      const stream = await eventStream(
        context,
        types?.length ? types : EVENT_TYPES,
        after,
        (event) => !isApprovalEvent(event.type) || seesApprovalEvent(context.viewer, event.payload),
        { announceStart: true },
      );
      return startingWithPosition(stream);
    }),
    resolve: (event) => event.payload as never,
  }),
);

const RecordedEventRef = builder.objectRef<RecordedEvent>('RecordedEvent').implement({
  description: 'An event of the tenant’s replay window, with when its change was committed.',
  fields: (t) => ({
    recordedAt: t.field({
      type: 'DateTime',
      description: 'When the change the event announces was committed.',
      resolve: (recorded) => recorded.recordedAt,
    }),
    event: t.field({ type: TenantEvent, resolve: (recorded) => recorded.event.payload as never }),
  }),
});

const recentEventsArgs = z.object({
  first: graphqlArg(z.int().min(1).max(200).nullish(), { description: '1 to 200; default 50.' }),
  types: typesArg,
});

builder.queryField('recentEvents', (t) =>
  t.withAuth({ authenticated: true }).field({
    type: [RecordedEventRef],
    description:
      'The tenant’s most recent events (or those of the given types), newest first, from the replay ' +
      'window (EVENT_RETENTION_HOURS): the history a feed shows before its `events` subscription brings ' +
      'more. Read after the subscription’s EventStreamStarted, it misses nothing: what was published before ' +
      'the start is here, what comes after arrives on the stream (an event in both has the same eventId).',
    ...zodField(t, recentEventsArgs, async (_root, { first, types }, context) => {
      const wanted = types?.length ? types : EVENT_TYPES;
      // Approval events are the approvers' (and each requesting agent's own): others never read them.
      const seesAll = context.viewer.roles.some((role) => role === 'chairman' || role === 'operator');
      const recent = await recentEvents(context.prisma, {
        tenantId: context.viewer.tenantId,
        types: seesAll
          ? wanted
          : wanted.filter((type) => !isApprovalEvent(type) || context.viewer.roles.includes('agent')),
        first: first ?? 50,
        retentionHours: context.services.config.eventRetentionHours,
      });
      return recent.filter(
        (recorded) =>
          hearsOf(context.viewer, recorded.event) &&
          (!isApprovalEvent(recorded.event.type) ||
            seesApprovalEvent(context.viewer, recorded.event.payload)),
      );
    }),
  }),
);
