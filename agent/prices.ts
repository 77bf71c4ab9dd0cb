import { readFileSync } from 'node:fs';

/**
 * US dollars per million tokens of one model. `cachedInput` prices the prompt tokens the provider served
 * from its cache (`usage.prompt_tokens_details.cached_tokens`; default: `input`); `reasoning` prices the
 * reasoning tokens (`usage.completion_tokens_details.reasoning_tokens`, which are part of the completion
 * tokens; default: `output`).
 */
export interface ModelPrice {
  input: number;
  cachedInput?: number;
  output: number;
  reasoning?: number;
}

export type PriceTable = Record<string, ModelPrice>;

/**
 * List prices (USD per million tokens) of common OpenAI models, as published by the provider. Check them
 * against your provider's page and override them (AGENT_PRICES) for your contract or another provider; a
 * local model costs what you say it does (`{"llama3.1": {"input": 0, "output": 0}}`).
 */
export const DEFAULT_PRICES: PriceTable = {
  'gpt-4o': { input: 2.5, cachedInput: 1.25, output: 10 },
  'gpt-4o-mini': { input: 0.15, cachedInput: 0.075, output: 0.6 },
  'gpt-4.1': { input: 2, cachedInput: 0.5, output: 8 },
  'gpt-4.1-mini': { input: 0.4, cachedInput: 0.1, output: 1.6 },
  'gpt-4.1-nano': { input: 0.1, cachedInput: 0.025, output: 0.4 },
  o3: { input: 2, cachedInput: 0.5, output: 8 },
  'o4-mini': { input: 1.1, cachedInput: 0.275, output: 4.4 },
};

/** The usage of one or more Chat Completions calls, as their `usage` objects give it. */
export interface Usage {
  promptTokens: number;
  completionTokens: number;
  cachedInputTokens: number;
  reasoningTokens: number;
}

export const noUsage = (): Usage => ({
  promptTokens: 0,
  completionTokens: 0,
  cachedInputTokens: 0,
  reasoningTokens: 0,
});

interface UsageObject {
  prompt_tokens?: number;
  completion_tokens?: number;
  prompt_tokens_details?: { cached_tokens?: number } | null;
  completion_tokens_details?: { reasoning_tokens?: number } | null;
}

/** `total` plus one Chat Completions `usage` object (absent: nothing added). */
export function addUsage(total: Usage, usage: UsageObject | null | undefined): Usage {
  if (!usage) return total;
  return {
    promptTokens: total.promptTokens + (usage.prompt_tokens ?? 0),
    completionTokens: total.completionTokens + (usage.completion_tokens ?? 0),
    cachedInputTokens: total.cachedInputTokens + (usage.prompt_tokens_details?.cached_tokens ?? 0),
    reasoningTokens: total.reasoningTokens + (usage.completion_tokens_details?.reasoning_tokens ?? 0),
  };
}

/** A model's price: by its exact name, else by the name without a `-YYYY-MM-DD` version suffix. */
export function priceOf(prices: PriceTable, model: string): ModelPrice | undefined {
  return prices[model] ?? prices[model.replace(/-\d{4}-\d{2}-\d{2}$/, '')];
}

/** The cost in US dollars of `usage` at `price`, to the micro-dollar (what completeTask keeps). */
export function costOf(price: ModelPrice, usage: Usage): number {
  const cached = Math.min(usage.cachedInputTokens, usage.promptTokens);
  const reasoning = Math.min(usage.reasoningTokens, usage.completionTokens);
  const micro =
    (usage.promptTokens - cached) * price.input +
    cached * (price.cachedInput ?? price.input) +
    (usage.completionTokens - reasoning) * price.output +
    reasoning * (price.reasoning ?? price.output);
  // Prices are per million tokens: the sum is in micro-dollars already.
  return Math.round(micro) / 1e6;
}

const isPrice = (value: unknown): value is ModelPrice => {
  if (typeof value !== 'object' || value === null) return false;
  const price = value as Record<string, unknown>;
  const ok = (key: string, required: boolean) =>
    price[key] === undefined
      ? !required
      : typeof price[key] === 'number' && Number.isFinite(price[key]) && price[key] >= 0;
  return (
    ok('input', true) &&
    ok('output', true) &&
    ok('cachedInput', false) &&
    ok('reasoning', false) &&
    Object.keys(price).every((key) => ['input', 'cachedInput', 'output', 'reasoning'].includes(key))
  );
};

/**
 * The price table: the defaults with `override` laid over them, model by model. `override` is JSON (it
 * starts with `{`) or the path of a JSON file: `{"model": {"input": 2.5, "cachedInput": 1.25, "output": 10}}`.
 * Throws an Error saying what is wrong.
 */
export function loadPrices(override: string | undefined): PriceTable {
  if (!override?.trim()) return { ...DEFAULT_PRICES };
  let text = override;
  if (!override.trim().startsWith('{')) {
    try {
      text = readFileSync(override, 'utf8');
    } catch (error) {
      throw new Error(`AGENT_PRICES: cannot read ${override}: ${(error as Error).message}`);
    }
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (error) {
    throw new Error(`AGENT_PRICES is not JSON: ${(error as Error).message}`);
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
    throw new Error('AGENT_PRICES must be an object of model name → price');
  }
  for (const [model, price] of Object.entries(parsed)) {
    if (!isPrice(price)) {
      throw new Error(
        `AGENT_PRICES: the price of ${model} must be {"input", "output"[, "cachedInput", "reasoning"]}: USD per million tokens, numbers ≥ 0`,
      );
    }
  }
  return { ...DEFAULT_PRICES, ...(parsed as PriceTable) };
}
