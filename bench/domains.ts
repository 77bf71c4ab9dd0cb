import type { Caller, TestApp } from '../test/support/app.js';
import { abTestResultsAtScale } from './experiments.js';

/** A domain benchmark: prepares data, then names the request to repeat. Null skips it. */
export interface DomainBenchmark {
  name: string;
  prepare(
    t: TestApp,
    caller: Caller,
    baseUrl: string,
  ): Promise<{
    url: string;
    init: { method: string; headers?: Record<string, string>; body?: string };
  } | null>;
}

export const domainBenchmarks: DomainBenchmark[] = [abTestResultsAtScale];
