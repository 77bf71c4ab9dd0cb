import type { Caller, TestApp } from '../test/support/app.js';
import { abTestResultsAtScale } from './experiments.js';
import type { RequestSpec } from './measure.js';

/** A domain benchmark: prepares data, then names the request to repeat. Null skips it. */
export interface DomainBenchmark {
  name: string;
  /** Also measure one client alone against this per-request latency target. */
  perRequestTargetMs?: number;
  prepare(
    t: TestApp,
    caller: Caller,
    baseUrl: string,
  ): Promise<{
    url: string;
    init: RequestSpec | ((index: number) => RequestSpec);
  } | null>;
}

const chat: DomainBenchmark = {
  name: 'POST /api/v1/agents/cfo/chat (202, task queued)',
  async prepare(_t, caller, baseUrl) {
    return {
      url: `${baseUrl}/api/v1/agents/cfo/chat`,
      init: {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${caller.token}` },
        body: JSON.stringify({ message: 'Summarise the quarter', persist_thread: false }),
      },
    };
  },
};

const vitalsCached: DomainBenchmark = {
  name: 'GET /api/v1/agents/cfo/vitals (cached)',
  async prepare(_t, caller, baseUrl) {
    return {
      url: `${baseUrl}/api/v1/agents/cfo/vitals`,
      init: { method: 'GET', headers: { authorization: `Bearer ${caller.token}` } },
    };
  },
};

const vitalsUncached: DomainBenchmark = {
  name: 'GET /api/v1/agents/cfo/vitals (uncached: a new caller each request)',
  async prepare(t, caller, baseUrl) {
    // The cache is per caller, so rotating through many callers of the tenant makes nearly every request a miss.
    const tokens = await Promise.all(
      Array.from({ length: 20_000 }, (_, i) =>
        t.caller(['member'], { tenantId: caller.tenantId, sub: `bench-${i}` }),
      ),
    );
    return {
      url: `${baseUrl}/api/v1/agents/cfo/vitals`,
      init: (index: number) => ({
        method: 'GET',
        headers: { authorization: `Bearer ${tokens[index % tokens.length]?.token}` },
      }),
    };
  },
};

export const domainBenchmarks: DomainBenchmark[] = [chat, vitalsCached, vitalsUncached, abTestResultsAtScale];
