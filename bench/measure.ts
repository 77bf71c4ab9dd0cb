export interface RequestSpec {
  method: string;
  headers?: Record<string, string>;
  body?: string;
}

export interface Throughput {
  requests: number;
  seconds: number;
  perSecond: number;
  p50Ms: number;
  p99Ms: number;
}

/** Sends requests from `concurrency` workers for `seconds`; bounded in time and count, loopback only. */
export async function measure(
  url: string,
  init: RequestSpec | ((index: number) => RequestSpec),
  { seconds = 3, concurrency = 16, maxRequests = 200_000 } = {},
): Promise<Throughput> {
  const latencies: number[] = [];
  const deadline = performance.now() + seconds * 1000;
  const started = performance.now();
  let sent = 0;
  const worker = async () => {
    while (performance.now() < deadline && sent < maxRequests) {
      sent++;
      const begin = performance.now();
      const spec = typeof init === 'function' ? init(sent) : init;
      // A keep-alive socket the server closed while idle (between cases) is reset once; send again.
      const response = await fetch(url, spec).catch(() => fetch(url, spec));
      await response.arrayBuffer();
      if (response.status >= 400) throw new Error(`${url} answered ${response.status}`);
      latencies.push(performance.now() - begin);
    }
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
  const elapsed = (performance.now() - started) / 1000;
  latencies.sort((a, b) => a - b);
  const at = (q: number) => latencies[Math.min(latencies.length - 1, Math.floor(q * latencies.length))] ?? 0;
  return {
    requests: latencies.length,
    seconds: elapsed,
    perSecond: latencies.length / elapsed,
    p50Ms: at(0.5),
    p99Ms: at(0.99),
  };
}

export const ratio = (value: number, baseline: number) => (baseline > 0 ? value / baseline : Number.NaN);
