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

/** The most deliverables one completion carries (docs/limits.md). */
export const MAX_DELIVERABLES = 10;
/** The longest TEXT deliverable, in characters. */
export const MAX_DELIVERABLE_TEXT = 65_536;
/** The longest LINK deliverable's URL, in characters. */
export const MAX_DELIVERABLE_URL = 2048;

export const DELIVERABLE_KINDS = ['TEXT', 'LINK', 'FILE'] as const;
export type DeliverableKind = (typeof DELIVERABLE_KINDS)[number];

/** Each kind's own fields: the others must be absent, so that a deliverable is never read two ways. */
const KIND_FIELDS: Record<DeliverableKind, readonly ('text' | 'url' | 'data' | 'mimeType' | 'filename')[]> = {
  TEXT: ['text'],
  LINK: ['url'],
  FILE: ['data', 'mimeType', 'filename'],
};

const httpUrl = z.url({ protocol: /^https?$/ }).max(MAX_DELIVERABLE_URL);

/**
 * One piece of evidence a completion carries: a TEXT (`text`), a LINK (an http(s) `url`) or a FILE
 * (base64 `data` with its `mimeType` and optional `filename`, checked and stored by the rules of chat
 * attachments: docs/deliverables.md). `title` names it for people.
 */
export const deliverableRule = z
  .object({
    kind: z.enum(DELIVERABLE_KINDS),
    title: z.string().trim().min(1).max(200).nullish(),
    text: z.string().min(1).max(MAX_DELIVERABLE_TEXT).nullish(),
    url: httpUrl.nullish(),
    data: z.string().min(1).nullish(),
    mimeType: z.string().min(1).max(255).nullish(),
    filename: z.string().nullish(),
  })
  .superRefine((deliverable, context) => {
    const own = KIND_FIELDS[deliverable.kind];
    const required: readonly ('text' | 'url' | 'data' | 'mimeType')[] =
      deliverable.kind === 'TEXT' ? ['text'] : deliverable.kind === 'LINK' ? ['url'] : ['data', 'mimeType'];
    for (const field of required) {
      if ((deliverable[field] ?? null) === null) {
        context.addIssue({
          code: 'custom',
          path: [field],
          message: `a ${deliverable.kind} deliverable needs ${field}`,
          input: null,
        });
      }
    }
    for (const field of ['text', 'url', 'data', 'mimeType', 'filename'] as const) {
      if (!own.includes(field) && (deliverable[field] ?? null) !== null) {
        context.addIssue({
          code: 'custom',
          path: [field],
          message: `a ${deliverable.kind} deliverable has no ${field}`,
          input: null,
        });
      }
    }
  });

export type DeliverableInput = z.output<typeof deliverableRule>;

/** The most model calls one report (or one completion) carries (docs/limits.md). */
export const MAX_STEPS_PER_REPORT = 500;

/** One model call an agent reports (reportTaskSteps, or with its completion). */
export const modelStepRule = z
  .object({
    model: z.string().trim().min(1).max(200),
    startedAt: z.iso.datetime({ offset: true }).nullish(),
    durationMs: z
      .int()
      .min(0)
      .max(24 * 3600 * 1000),
    inputTokens: tokenCount,
    cachedInputTokens: tokenCount.nullish(),
    outputTokens: tokenCount,
    reasoningTokens: tokenCount.nullish(),
    costUsd: z.number().min(0).max(1_000_000_000),
    finishReason: z.string().trim().min(1).max(100).nullish(),
    request: z.string().max(1_000_000).nullish(),
    response: z.string().max(1_000_000).nullish(),
  })
  .superRefine((step, context) => {
    if ((step.cachedInputTokens ?? 0) > step.inputTokens) {
      context.addIssue({
        code: 'custom',
        path: ['cachedInputTokens'],
        message: 'cachedInputTokens must not exceed inputTokens',
      });
    }
    if ((step.reasoningTokens ?? 0) > step.outputTokens) {
      context.addIssue({
        code: 'custom',
        path: ['reasoningTokens'],
        message: 'reasoningTokens must not exceed outputTokens',
      });
    }
  });
export type ModelStep = z.output<typeof modelStepRule>;

export const stepsReportRule = z.array(modelStepRule).min(1).max(MAX_STEPS_PER_REPORT);

/**
 * `completeTask`'s input: usage, output, recommendations, deliverables, the optional token breakdown and the
 * model calls not yet reported.
 */
export const completionReportRule = z
  .object({
    output: z.string().max(1_000_000).nullish(),
    tokensUsed: tokenCount,
    costUsd: z.number().min(0).max(1_000_000_000),
    usage: tokenUsageRule.nullish(),
    recommendations: z.array(recommendationRule).max(MAX_RECOMMENDATIONS).nullish(),
    deliverables: z.array(deliverableRule).max(MAX_DELIVERABLES).nullish(),
    /** The attempt's model calls not reported yet, recorded before the completion in its statement. */
    steps: z.array(modelStepRule).max(MAX_STEPS_PER_REPORT).nullish(),
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
