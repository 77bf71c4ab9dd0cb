// The part of autocannon's programmatic API the benchmark uses (the package ships no types).
declare module 'autocannon' {
  import type { EventEmitter } from 'node:events';

  namespace autocannon {
    interface Request {
      method?: string;
      path?: string;
      headers?: Record<string, string>;
      body?: string | Buffer;
    }
    interface Options {
      url: string;
      method?: string;
      headers?: Record<string, string>;
      body?: string | undefined;
      connections?: number;
      duration?: number;
      amount?: number;
      timeout?: number;
      requests?: { setupRequest?: (request: Request) => Request }[] | undefined;
    }
    interface Histogram {
      total: number;
      average: number;
      p50: number;
      p99: number;
      max: number;
    }
    interface Result {
      requests: Histogram;
      latency: Histogram;
      duration: number;
      errors: number;
      timeouts: number;
      non2xx: number;
      statusCodeStats?: Record<string, { count: number | string }>;
    }
    interface Instance extends EventEmitter {
      on(
        event: 'response',
        listener: (client: unknown, status: number, bytes: number, ms: number) => void,
      ): this;
      once(event: 'done', listener: (result: Result) => void): this;
      once(event: 'error', listener: (error: Error) => void): this;
      stop(): void;
    }
  }

  function autocannon(options: autocannon.Options): autocannon.Instance;
  export default autocannon;
}
