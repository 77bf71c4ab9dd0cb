import { z } from 'zod';
import { builder } from '../../builder.js';
import { decideRecommendation, recordRecommendationOutcome } from '../../domain/agents/recommendations.js';
import { idArg, zodField } from '../args.js';
import { RecommendationRef } from './types.js';

builder.mutationField('decideRecommendation', (t) =>
  t.withAuth({ member: true, operator: true, chairman: true }).field({
    type: RecommendationRef,
    description: 'Records whether the user accepted a recommendation (counts toward acceptance_rate).',
    ...zodField(t, z.object({ id: idArg(), accepted: z.boolean() }), (_root, { id, accepted }, context) =>
      decideRecommendation(context, id, accepted),
    ),
  }),
);

builder.mutationField('recordRecommendationOutcome', (t) =>
  t.withAuth({ member: true, operator: true, chairman: true }).field({
    type: RecommendationRef,
    description:
      'Records whether a recommendation’s predicted outcome matched reality (counts toward outcome_accuracy); 409 when it predicted nothing.',
    ...zodField(t, z.object({ id: idArg(), matched: z.boolean() }), (_root, { id, matched }, context) =>
      recordRecommendationOutcome(context, id, matched),
    ),
  }),
);
