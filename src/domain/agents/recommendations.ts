import { recordAudit } from '../../audit.js';
import type { Prisma, Recommendation } from '../../generated/prisma/client.js';
import type { Actor } from '../actor.js';
import { conflict, notFound } from '../errors.js';
import { countRecommendationRecord } from '../finetuning/outcomes.js';

async function lockRecommendation(tx: Prisma.TransactionClient, context: Actor, id: string) {
  const [row] = await tx.$queryRaw<
    { accepted: boolean | null; outcome_matched: boolean | null; predicted_outcome: string | null }[]
  >`
    SELECT accepted, outcome_matched, predicted_outcome FROM recommendations
    WHERE id = ${id}::uuid AND tenant_id = ${context.viewer.tenantId}::uuid FOR UPDATE`;
  if (!row) throw notFound(`Recommendation ${id} not found`);
  return row;
}

/**
 * Records whether the user accepted a recommendation (feeds `acceptance_rate`). Repeating the same decision
 * changes nothing; a different one replaces it and counts in the period it was made.
 */
export function decideRecommendation(context: Actor, id: string, accepted: boolean): Promise<Recommendation> {
  return context.prisma.$transaction(async (tx) => {
    const current = await lockRecommendation(tx, context, id);
    if (current.accepted !== accepted) {
      await countRecommendationRecord(tx, id, 'decision', accepted);
      await tx.$executeRaw`
        UPDATE recommendations SET accepted = ${accepted}, decided_at = now(), decided_by = ${context.viewer.sub}
        WHERE id = ${id}::uuid`;
    }
    await recordAudit(tx, context, {
      action: 'recommendation.decide',
      targetType: 'recommendation',
      targetId: id,
      outcome: current.accepted === accepted ? 'unchanged' : accepted ? 'accepted' : 'rejected',
    });
    return tx.recommendation.findUniqueOrThrow({ where: { id } });
  });
}

/**
 * Records whether a recommendation's predicted outcome matched what happened (feeds `outcome_accuracy`);
 * 409 for a recommendation that predicted nothing. Like decisions, a repeat changes nothing and a different
 * record replaces the previous one.
 */
export function recordRecommendationOutcome(
  context: Actor,
  id: string,
  matched: boolean,
): Promise<Recommendation> {
  return context.prisma.$transaction(async (tx) => {
    const current = await lockRecommendation(tx, context, id);
    if (current.predicted_outcome === null)
      throw conflict(`Recommendation ${id} has no predicted outcome to evaluate`);
    if (current.outcome_matched !== matched) {
      await countRecommendationRecord(tx, id, 'outcome', matched);
      await tx.$executeRaw`
        UPDATE recommendations SET outcome_matched = ${matched}, outcome_recorded_at = now() WHERE id = ${id}::uuid`;
    }
    await recordAudit(tx, context, {
      action: 'recommendation.outcome',
      targetType: 'recommendation',
      targetId: id,
      outcome: current.outcome_matched === matched ? 'unchanged' : matched ? 'matched' : 'missed',
    });
    return tx.recommendation.findUniqueOrThrow({ where: { id } });
  });
}
