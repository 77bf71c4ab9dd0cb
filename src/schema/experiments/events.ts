import { z } from 'zod';
import { builder } from '../../builder.js';
import type { AbTestResultsPayload } from '../../domain/experiments/announcements.js';
import { findAbTest } from '../../domain/experiments/lifecycle.js';
import { summarizeExperiment } from '../../domain/experiments/results.js';
import { idArg, zodSubscription } from '../args.js';
import { afterArg, eventStream } from '../event-stream.js';
import { AbTestResultsRef, AbTestStatus } from './types.js';

type Payload = AbTestResultsPayload & { event_id: string; tenant_id: string };

export const AbTestResultsChangedEvent = builder.objectRef<Payload>('AbTestResultsChangedEvent').implement({
  description:
    'A test’s results changed (events were recorded) or its status did. Coalesced: at most one per test ' +
    'every 250 ms while events arrive, the last one after the last change.',
  fields: (t) => ({
    eventId: t.exposeID('event_id'),
    tenantId: t.exposeID('tenant_id'),
    testId: t.exposeID('test_id'),
    name: t.exposeString('name'),
    status: t.field({ type: AbTestStatus, resolve: (event) => event.status }),
    changedAt: t.field({
      type: 'DateTime',
      description: 'When the counters were read.',
      resolve: (event) => new Date(event.changed_at),
    }),
    results: t.field({
      type: AbTestResultsRef,
      description: 'The results at `changedAt`, as `abTestResults` answered them then.',
      resolve: (event) => ({
        testId: event.test_id,
        status: event.status,
        ...summarizeExperiment(event.variants, event.alpha, {
          analysis: event.analysis,
          ended: event.status === 'completed',
          storedState: event.sequential_state,
        }),
      }),
    }),
  }),
});

const changesArgs = z.object({ testId: idArg(), after: afterArg });

builder.subscriptionField('abTestResultsChanged', (t) =>
  t.withAuth({ authenticated: true }).field({
    type: AbTestResultsChangedEvent,
    description:
      'The results of one A/B test of the subscriber’s tenant each time they change (NOT_FOUND for a test ' +
      'the tenant does not have): at most four a second while its events arrive, however many are recorded, ' +
      'and always one after the last change.',
    ...zodSubscription(t, changesArgs, async (_root, { testId, after }, context) => {
      await findAbTest(context, testId);
      return eventStream(
        context,
        ['AB_TEST_RESULTS_CHANGED'],
        after,
        (event) => event.payload.test_id === testId,
      );
    }),
    resolve: (event) => event.payload as unknown as Payload,
  }),
);
