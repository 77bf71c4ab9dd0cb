import { describe, expect, it } from 'vitest';
import { raisesWasmTieringBudget } from '../../src/wasm-tiering.js';

describe('the WebAssembly tier-up budget', () => {
  it('is raised on Node 20 only, where it was measured', () => {
    expect(raisesWasmTieringBudget('20.19.0')).toBe(true);
    expect(raisesWasmTieringBudget('20.20.2')).toBe(true);
  });

  it("is V8's default on Node 24, where it made no measurable difference, and on Node 22, untried", () => {
    expect(raisesWasmTieringBudget('24.22.3')).toBe(false);
    expect(raisesWasmTieringBudget('22.13.0')).toBe(false);
    expect(raisesWasmTieringBudget('26.0.0')).toBe(false);
  });
});
