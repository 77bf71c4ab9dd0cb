import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { addUsage, costOf, DEFAULT_PRICES, loadPrices, noUsage, priceOf } from '../../agent/prices.js';

describe('the agent runtime’s price table', () => {
  it('prices uncached input, cached input, output and reasoning tokens per million, to the micro-dollar', () => {
    const usage = addUsage(noUsage(), {
      prompt_tokens: 2000,
      completion_tokens: 500,
      prompt_tokens_details: { cached_tokens: 1000 },
      completion_tokens_details: { reasoning_tokens: 200 },
    });
    expect(usage).toEqual({
      promptTokens: 2000,
      completionTokens: 500,
      cachedInputTokens: 1000,
      reasoningTokens: 200,
    });
    expect(costOf({ input: 2.5, cachedInput: 1.25, output: 10, reasoning: 20 }, usage)).toBe(
      (1000 * 2.5 + 1000 * 1.25 + 300 * 10 + 200 * 20) / 1e6,
    );
    // Without cached or reasoning prices, those tokens cost the input and output rates.
    expect(costOf({ input: 1, output: 2 }, usage)).toBe((2000 * 1 + 500 * 2) / 1e6);
    expect(addUsage(usage, undefined)).toBe(usage);
  });

  it('finds a dated model version by its name', () => {
    expect(priceOf(DEFAULT_PRICES, 'gpt-4o-2024-08-06')).toBe(DEFAULT_PRICES['gpt-4o']);
    expect(priceOf(DEFAULT_PRICES, 'unknown-model')).toBeUndefined();
  });

  it('lays AGENT_PRICES (JSON or a file) over the defaults and refuses a malformed one', async () => {
    expect(loadPrices('{"llama3.1": {"input": 0, "output": 0}}')['llama3.1']).toEqual({
      input: 0,
      output: 0,
    });
    const file = path.join(await mkdtemp(path.join(tmpdir(), 'prices-')), 'prices.json');
    await writeFile(file, JSON.stringify({ 'gpt-4o': { input: 1, output: 3 } }));
    const table = loadPrices(file);
    expect(table['gpt-4o']).toEqual({ input: 1, output: 3 });
    expect(table['gpt-4o-mini']).toEqual(DEFAULT_PRICES['gpt-4o-mini']);
    expect(() => loadPrices('{"m": {"input": -1, "output": 0}}')).toThrow(/USD per million tokens/);
    expect(() => loadPrices('{"m": {"input": 1}}')).toThrow(/price of m/);
    expect(() => loadPrices('{nope')).toThrow(/not JSON/);
    expect(() => loadPrices('/nonexistent/prices.json')).toThrow(/cannot read/);
  });
});
