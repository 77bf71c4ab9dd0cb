import { z } from 'zod';
import type { AuthedContext } from '../builder.js';
import { hearsOf } from '../domain/agents/role-binding.js';
import { type EventStream, isStreamPosition, openEventStream } from '../events/replay.js';
import type { BusEvent, EventType } from '../events/topics.js';
import { graphqlArg } from './args.js';

/**
 * `after`: the id of the last event a client received, or a stream position, to resume the stream after it;
 * a GraphQL `ID`.
 */
export const afterArg = graphqlArg(
  z
    .string()
    .refine((value) => z.guid().safeParse(value).success || isStreamPosition(value), {
      message: 'must be an event id or the position of an EventStreamStarted message',
    })
    .nullish(),
  {
    type: 'ID',
    description:
      'Id of the last event received (or, on `events`, the `position` of EventStreamStarted when no event ' +
      'came after it): the tenant’s events after it are replayed first, in order, then live ones follow ' +
      'without gaps or duplicates. RESUME_POINT_EXPIRED when it is older than the replay window.',
  },
);

/**
 * The tenant's events of these types for a subscription, resumed after `after` when given: those `accept`
 * takes, of which the subscriber hears (hearsOf: a token bound to roles, only their tasks' events).
 */
export function eventStream(
  context: AuthedContext,
  types: readonly EventType[],
  after: string | null | undefined,
  accept: (event: BusEvent) => boolean = () => true,
  options: { announceStart?: boolean } = {},
): Promise<EventStream> {
  const { viewer } = context;
  return openEventStream({
    prisma: context.prisma,
    bus: context.services.bus,
    tenantId: viewer.tenantId,
    types,
    after,
    retentionHours: context.services.config.eventRetentionHours,
    accept: (event) => hearsOf(viewer, event) && accept(event),
    ...options,
  });
}
