import { z } from 'zod';
import { builder } from '../builder.js';
import { EVENT_TYPES, type EventType } from '../events/topics.js';
import { parseArgs } from '../validation/index.js';
import { TaskUpdatedEvent } from './agents/subscriptions.js';
import { ConnectorInvokedEvent } from './connectors/calls.js';
import { AgentPausedEvent, AgentResumedEvent } from './dogfood.js';
import { AFTER_DESCRIPTION, afterArg, eventStream } from './event-stream.js';
import { ModelVersionChangedEvent } from './finetuning.js';

const EventTypeEnum = builder.enumType('EventType', {
  description: 'The kinds of durable events a tenant’s stream carries.',
  values: EVENT_TYPES,
});

const objectOf: Record<EventType, string> = {
  DOGFOOD_AGENT_PAUSED: 'AgentPausedEvent',
  DOGFOOD_AGENT_RESUMED: 'AgentResumedEvent',
  TASK_UPDATED: 'TaskUpdatedEvent',
  MODEL_VERSION_CHANGED: 'ModelVersionChangedEvent',
  CONNECTOR_INVOKED: 'ConnectorInvokedEvent',
};

const TenantEvent = builder.unionType('TenantEvent', {
  description: 'Any event of the tenant’s stream; every member has an eventId to resume after.',
  types: [
    AgentPausedEvent,
    AgentResumedEvent,
    TaskUpdatedEvent,
    ModelVersionChangedEvent,
    ConnectorInvokedEvent,
  ],
  resolveType: (payload) => objectOf[(payload as unknown as { type: EventType }).type],
});

const eventsArgs = z.object({ types: z.array(z.enum(EVENT_TYPES)).nullish(), after: afterArg });

builder.subscriptionField('events', (t) =>
  t.withAuth({ authenticated: true }).field({
    type: TenantEvent,
    description:
      'Every event of the subscriber’s tenant (or of the given types) in commit order: pauses, resumes, ' +
      'task updates, model version changes and connector calls. Resumable with `after`.',
    args: {
      types: t.arg({ type: [EventTypeEnum], description: 'Default: every type.' }),
      after: t.arg.id({ description: AFTER_DESCRIPTION }),
    },
    subscribe: (_root, args, context) => {
      const { types, after } = parseArgs(eventsArgs, args);
      return eventStream(context, types?.length ? types : EVENT_TYPES, after);
    },
    resolve: (event) => event.payload as never,
  }),
);
