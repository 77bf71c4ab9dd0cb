// The load generator: a child process (forked by bench/measure.ts) that runs autocannon for each job it
// is sent over IPC and answers its figures. Keeping the client out of the process that starts the servers
// and of the servers themselves is the point: nothing measured shares an event loop with the load.
import autocannon from 'autocannon';

export interface LoadJob {
  url: string;
  method: 'GET' | 'POST';
  headers: Record<string, string>;
  body?: string;
  connections: number;
  /** Run for this long… */
  seconds?: number;
  /** …or send exactly this many requests. */
  amount?: number;
  /** Each request carries the next of these as `authorization` (callers the response cache never saw). */
  rotateAuthorization?: string[];
  /**
   * Each request is a `recordAbTestEvents` call with `perCall` new subjects numbered from `firstCall`
   * onwards; every fifth subject converts.
   */
  abEvents?: { query: string; testId: string; perCall: number; firstCall: number };
}

export interface LoadResult {
  requests: number;
  seconds: number;
  perSecond: number;
  p50Ms: number;
  p99Ms: number;
  maxMs: number;
  /** Responses outside 2xx and connection errors or timeouts. */
  failures: number;
  statusCodes: Record<string, number>;
}

function quantile(sorted: Float64Array, q: number): number {
  if (sorted.length === 0) return Number.NaN;
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? Number.NaN;
}

function eventsBody(job: NonNullable<LoadJob['abEvents']>, call: number): string {
  const events = Array.from({ length: job.perCall }, (_, i) => ({
    subjectId: `s${call * job.perCall + i}`,
    converted: i % 5 === 0,
  }));
  return JSON.stringify({ query: job.query, variables: { testId: job.testId, events } });
}

export async function runLoad(job: LoadJob): Promise<LoadResult> {
  let sent = 0;
  const { rotateAuthorization: tokens, abEvents } = job;
  const setupRequest =
    tokens || abEvents
      ? (request: autocannon.Request) => {
          const index = sent++;
          if (tokens) {
            request.headers = { ...request.headers, authorization: tokens[index % tokens.length] ?? '' };
          }
          if (abEvents) request.body = eventsBody(abEvents, abEvents.firstCall + index);
          return request;
        }
      : undefined;
  const latencies: number[] = [];
  let lastResponse = 0;
  const instance = autocannon({
    url: job.url,
    method: job.method,
    headers: job.headers,
    body: job.body,
    connections: job.connections,
    ...(job.amount ? { amount: job.amount } : { duration: job.seconds ?? 3 }),
    timeout: job.amount ? 120 : 30,
    requests: setupRequest ? [{ setupRequest }] : undefined,
  });
  instance.on('response', (_client, _status, _bytes, responseTime) => {
    latencies.push(responseTime);
    lastResponse = performance.now();
  });
  const started = performance.now();
  const result = await new Promise<autocannon.Result>((resolve, reject) => {
    instance.once('done', resolve);
    instance.once('error', reject);
  });
  // autocannon's own `duration` is whole seconds in places; the wall time is what the rate needs. A run of a
  // fixed amount ends at the last response: autocannon notices it is done only at its next one-second tick,
  // which would add up to a second of idle time to every run.
  const ended = job.amount && lastResponse > 0 ? lastResponse : performance.now();
  const seconds = (ended - started) / 1000;
  const sorted = Float64Array.from(latencies).sort();
  const statusCodes = Object.fromEntries(
    Object.entries(result.statusCodeStats ?? {}).map(([code, { count }]) => [code, Number(count)]),
  );
  return {
    requests: result.requests.total,
    seconds,
    perSecond: result.requests.total / seconds,
    p50Ms: quantile(sorted, 0.5),
    p99Ms: quantile(sorted, 0.99),
    maxMs: sorted.at(-1) ?? Number.NaN,
    failures: result.non2xx + result.errors,
    statusCodes,
  };
}

if (process.send) {
  process.on('message', (message: { id: number; job: LoadJob }) => {
    runLoad(message.job).then(
      (result) => process.send?.({ id: message.id, result }),
      (error: unknown) => process.send?.({ id: message.id, error: String(error) }),
    );
  });
  process.on('disconnect', () => process.exit(0));
}
