import { z } from 'zod';

/**
 * The input rules of a task's completion report, kept apart from GraphQL so that every face (the
 * `completeTask` mutation, MCP's `complete_task`, the reference runtime's `boardroom_recommend` tool)
 * checks what an agent reports with the same rules.
 */

/** One recommendation an agent makes with its answer. */
export const recommendationRule = z.object({
  summary: z.string().trim().min(1).max(2000),
  predictedOutcome: z.string().trim().min(1).max(2000).nullish(),
});

/** The most recommendations one completion carries. */
export const MAX_RECOMMENDATIONS = 50;

const tokenCount = z.int().min(0).max(Number.MAX_SAFE_INTEGER);

/**
 * The per-kind breakdown of `tokensUsed`: input (prompt) and output (completion) tokens, of which
 * `cachedInputTokens` were served from the provider's prompt cache and `reasoningTokens` spent on
 * reasoning. Omitted cached or reasoning counts are 0.
 */
export const tokenUsageRule = z.object({
  inputTokens: tokenCount,
  cachedInputTokens: tokenCount.nullish(),
  outputTokens: tokenCount,
  reasoningTokens: tokenCount.nullish(),
});

export type TokenUsage = z.output<typeof tokenUsageRule>;

/**
 * Why a breakdown does not add up to `tokensUsed`, as issues located in the breakdown; none when it does:
 * cached input ⊆ input, reasoning ⊆ output, input + output = tokensUsed.
 */
function usageInconsistencies(
  usage: TokenUsage,
  tokensUsed: number,
): { path: (keyof TokenUsage)[]; message: string }[] {
  const issues: { path: (keyof TokenUsage)[]; message: string }[] = [];
  if ((usage.cachedInputTokens ?? 0) > usage.inputTokens) {
    issues.push({ path: ['cachedInputTokens'], message: 'cachedInputTokens must not exceed inputTokens' });
  }
  if ((usage.reasoningTokens ?? 0) > usage.outputTokens) {
    issues.push({ path: ['reasoningTokens'], message: 'reasoningTokens must not exceed outputTokens' });
  }
  if (usage.inputTokens + usage.outputTokens !== tokensUsed) {
    issues.push({ path: ['inputTokens'], message: 'inputTokens + outputTokens must equal tokensUsed' });
  }
  return issues;
}

/** `completeTask`'s input: usage, output, recommendations and the optional token breakdown. */
export const completionReportRule = z
  .object({
    output: z.string().max(1_000_000).nullish(),
    tokensUsed: tokenCount,
    costUsd: z.number().min(0).max(1_000_000_000),
    usage: tokenUsageRule.nullish(),
    recommendations: z.array(recommendationRule).max(MAX_RECOMMENDATIONS).nullish(),
  })
  .superRefine(
    (report, context) => {
      if (!report.usage) return;
      for (const issue of usageInconsistencies(report.usage, report.tokensUsed)) {
        context.addIssue({ code: 'custom', path: ['usage', ...issue.path], message: issue.message });
      }
    },
    // Counts that are themselves invalid are reported once, as such, not also as inconsistent.
    { when: (payload) => payload.issues.length === 0 },
  );
