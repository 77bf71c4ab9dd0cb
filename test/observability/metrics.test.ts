import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { metricsAccess } from '../../src/observability/metrics.js';
import { listenForMetrics } from '../../src/observability/metrics-listener.js';
import type { Caller, TestApp } from '../support/app.js';
import { databaseKind } from '../support/database.js';
import { withTestApp, withTestAppAndCaller } from '../support/fixtures.js';
import { parseMetrics, sampleValue, scrape } from './metrics-support.js';

const DURATION = 'boardroom_graphql_operation_duration_seconds_count';
const HTTP = 'boardroom_http_request_duration_seconds_count';

/** How many queries named `operationName` (`other` when unnamed) ended in `outcome`. */
const queriesTimed = (samples: ReturnType<typeof parseMetrics>, operationName: string, outcome: string) =>
  sampleValue(samples, DURATION, { operation_name: operationName, operation_type: 'query', outcome });

describe('/metrics on a development instance bound to loopback', () => {
  let t: TestApp;
  let chairman: Caller;

  withTestAppAndCaller(['chairman'], (made) => ({ t, caller: chairman } = made));

  it('shows a GraphQL operation by type and outcome, and the HTTP request by route', async () => {
    const result = await t.graphql('query WhoAmI { me { sub } }', {}, chairman);
    expect(result.errors).toBeUndefined();
    const failed = await t.graphql('query Broken { me { nope } }', {}, chairman);
    expect(failed.errors).toBeDefined();

    const response = await scrape(t);
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toMatch(/^text\/plain/);
    const samples = parseMetrics(response.text);
    expect(queriesTimed(samples, 'other', 'success')).toBe(1);
    expect(queriesTimed(samples, 'other', 'invalid')).toBe(1);
    expect(sampleValue(samples, HTTP, { method: 'POST', route: '/graphql', status: '200' })).toBe(1);
    expect(sampleValue(samples, 'graphql_envelop_phase_execute_count', { operationType: 'query' })).toBe(1);
  });

  it('shows a REST request under its route template, and the operation it ran', async () => {
    const graphqlRequests = (samples: ReturnType<typeof parseMetrics>) =>
      samples
        .filter((sample) => sample.name === HTTP && sample.labels.route === '/graphql')
        .reduce((sum, sample) => sum + sample.value, 0);
    const before = graphqlRequests(parseMetrics((await scrape(t)).text));
    const response = await t.rest('GET', '/api/v1/agents/CFO/vitals', { caller: chairman });
    expect(response.status).toBe(200);
    const unknown = await t.rest('GET', '/api/v1/agents/cfo/vitals/extra', { caller: chairman });
    expect(unknown.status).toBe(404);

    const samples = parseMetrics((await scrape(t)).text);
    expect(
      sampleValue(samples, HTTP, { method: 'GET', route: '/api/v1/agents/{role}/vitals', status: '200' }),
    ).toBe(1);
    expect(sampleValue(samples, HTTP, { method: 'GET', route: 'unmatched', status: '404' })).toBe(1);
    expect(queriesTimed(samples, 'AgentVitals', 'success')).toBe(1);
    // The inner request REST makes is not a second HTTP request.
    expect(graphqlRequests(samples)).toBe(before);
  });

  it('reads the task queue and the outbox backlog from the database on each scrape', async () => {
    await t.app.services.relay.stop();
    const chat = await t.rest('POST', '/api/v1/agents/cfo/chat', {
      caller: chairman,
      body: { message: 'Forecast Q3 cash flow' },
    });
    expect(chat.status).toBe(202);

    let samples = parseMetrics((await scrape(t)).text);
    expect(sampleValue(samples, 'boardroom_task_queue_depth', { state: 'pending' })).toBe(1);
    expect(sampleValue(samples, 'boardroom_task_queue_depth', { state: 'running' })).toBe(0);
    expect(sampleValue(samples, 'boardroom_outbox_backlog_events')).toBeGreaterThanOrEqual(1);
    expect(sampleValue(samples, 'boardroom_outbox_oldest_unpublished_age_seconds')).toBeGreaterThanOrEqual(0);

    await t.app.services.relay.start();
    await t.app.services.relay.kick();
    samples = parseMetrics((await scrape(t)).text);
    expect(sampleValue(samples, 'boardroom_outbox_backlog_events')).toBe(0);
    expect(sampleValue(samples, 'boardroom_outbox_oldest_unpublished_age_seconds')).toBe(0);
  });

  it('counts response cache hits and misses of cacheable operations only', async () => {
    const cache = 'boardroom_response_cache_requests_total';
    const before = parseMetrics((await scrape(t)).text);
    const query = 'query Production { productionModel(baseModel: "gpt-metrics") { id } }';
    await t.graphql(query, {}, chairman);
    await t.graphql(query, {}, chairman);
    await t.graphql('query Again { me { sub } }', {}, chairman);

    const samples = parseMetrics((await scrape(t)).text);
    const moved = (result: string) =>
      (sampleValue(samples, cache, { result }) ?? 0) - (sampleValue(before, cache, { result }) ?? 0);
    expect(moved('miss')).toBe(1);
    expect(moved('hit')).toBe(1);
  });

  it('shows process metrics, and pool figures only on PostgreSQL', async () => {
    const samples = parseMetrics((await scrape(t)).text);
    expect(sampleValue(samples, 'process_resident_memory_bytes')).toBeGreaterThan(0);
    expect(sampleValue(samples, 'boardroom_websocket_connections_active')).toBe(0);
    expect(sampleValue(samples, 'boardroom_graphql_subscriptions_active')).toBe(0);
    const max = sampleValue(samples, 'boardroom_db_pool_connections', { state: 'max' });
    if (databaseKind === 'postgresql') {
      expect(max).toBe(10);
      expect(sampleValue(samples, 'boardroom_db_pool_waiting_requests')).toBe(0);
    } else {
      expect(max).toBeUndefined();
    }
  });
});

describe('operation names as label values', () => {
  let t: TestApp;
  let chairman: Caller;
  withTestAppAndCaller(['chairman'], (made) => ({ t, caller: chairman } = made));

  it('are only the names of operations the server knows; a name a client chose never appears', async () => {
    const chosen = 'TenantB_SecretMergerWithAcme';
    expect((await t.graphql(`query ${chosen} { me { sub } }`, {}, chairman)).errors).toBeUndefined();
    expect((await t.graphql(`query ${chosen}Broken { me { nope } }`, {}, chairman)).errors).toBeDefined();
    // A REST route's operation name on a document of the client's own is not that operation.
    expect((await t.graphql('query AgentVitals { me { sub } }', {}, chairman)).errors).toBeUndefined();
    expect((await t.rest('GET', '/api/v1/agents/cfo/vitals', { caller: chairman })).status).toBe(200);

    const text = (await scrape(t)).text;
    expect(text).not.toContain(chosen);
    const samples = parseMetrics(text);
    const names = samples.filter((sample) => sample.name === DURATION).map((s) => s.labels.operation_name);
    expect(new Set(names)).toEqual(new Set(['AgentVitals', 'other']));
    expect(queriesTimed(samples, 'AgentVitals', 'success')).toBe(1);
    expect(queriesTimed(samples, 'other', 'success')).toBe(2);
  });

  it('never include an alias a client chose (error paths are not labels)', async () => {
    const failed = await t.graphql(
      'query { TenantB_SecretAlias: agentVitals(role: "no-such-role") { agentRole } }',
      {},
      chairman,
    );
    expect(failed.errors?.[0]?.path).toEqual(['TenantB_SecretAlias']);

    const text = (await scrape(t)).text;
    expect(text).not.toContain('TenantB_SecretAlias');
    expect(
      sampleValue(parseMetrics(text), 'graphql_envelop_error_result', {
        operationType: 'query',
        phase: 'execute',
      }),
    ).toBe(1);
  });
});

describe('rate-limit refusals', () => {
  let t: TestApp;
  withTestApp((app) => (t = app), { env: { RATE_LIMIT_PER_MINUTE: '1' } });

  it('are counted by surface', async () => {
    const caller = await t.caller(['member']);
    expect((await t.rest('GET', '/api/v1/agents/ceo/vitals', { caller })).status).toBe(200);
    expect((await t.rest('GET', '/api/v1/agents/ceo/vitals', { caller })).status).toBe(429);
    expect((await t.graphql('{ me { sub } }', {}, caller)).status).toBe(429);
    expect((await t.graphql('{ me { sub } }', {}, caller)).status).toBe(429);

    const samples = parseMetrics((await scrape(t)).text);
    expect(sampleValue(samples, 'boardroom_rate_limit_refusals_total', { surface: 'rest' })).toBe(1);
    expect(sampleValue(samples, 'boardroom_rate_limit_refusals_total', { surface: 'graphql' })).toBe(2);
  });
});

describe('/metrics with METRICS_TOKEN', () => {
  let t: TestApp;
  withTestApp((app) => (t = app), {
    env: { NODE_ENV: 'production', METRICS_TOKEN: 'scrape-token-0123456789' },
  });

  it('answers 401 without the bearer token or with another one, and 200 with it', async () => {
    const missing = await scrape(t);
    expect(missing.status).toBe(401);
    expect(missing.headers.get('www-authenticate')).toBe('Bearer');
    expect(missing.text).not.toContain('boardroom_');
    expect((await scrape(t, { authorization: 'Bearer wrong-token-0123456789' })).status).toBe(401);
    const allowed = await scrape(t, { authorization: 'Bearer scrape-token-0123456789' });
    expect(allowed.status).toBe(200);
    expect(allowed.text).toContain('boardroom_http_request_duration_seconds');
    expect((await scrape(t, { authorization: 'bearer scrape-token-0123456789' })).status).toBe(200);
    expect((await scrape(t, { authorization: 'scrape-token-0123456789' })).status).toBe(401);
  });

  it('requires the same token on the METRICS_PORT listener, which serves nothing else', async () => {
    const listener = await listenForMetrics(t.app.services.metrics, {
      port: 0,
      host: '127.0.0.1',
      token: 'scrape-token-0123456789',
    });
    try {
      expect((await fetch(`${listener.url}/metrics`)).status).toBe(401);
      const allowed = await fetch(`${listener.url}/metrics`, {
        headers: { authorization: 'Bearer scrape-token-0123456789' },
      });
      expect(allowed.status).toBe(200);
      expect(await allowed.text()).toContain('boardroom_task_queue_depth');
      expect((await fetch(`${listener.url}/graphql`)).status).toBe(404);
    } finally {
      await listener.close();
    }
  });
});

describe('/metrics on a production instance without METRICS_TOKEN', () => {
  let t: TestApp;
  withTestApp((app) => (t = app), { env: { NODE_ENV: 'production' } });

  it('answers 404', async () => {
    const response = await scrape(t, { authorization: 'Bearer anything-at-all-0123' });
    expect(response.status).toBe(404);
    expect(response.text).not.toContain('boardroom_');
  });
});

describe('metricsAccess', () => {
  const config = (env: Record<string, string>) =>
    loadConfig({ AUTH_JWT_SECRET: 'a-secret-that-is-long-enough-for-hs256-signing', ...env });

  it('opens /metrics only on a development instance bound to loopback', () => {
    expect(metricsAccess(config({}))).toEqual({ kind: 'open' });
    expect(metricsAccess(config({ HOST: '::1' }))).toEqual({ kind: 'open' });
    expect(metricsAccess(config({ HOST: '0.0.0.0' }))).toEqual({ kind: 'off' });
    expect(metricsAccess(config({ NODE_ENV: 'production' }))).toEqual({ kind: 'off' });
  });

  it('takes /metrics off the main port with METRICS_PORT, and requires METRICS_TOKEN wherever it is set', () => {
    expect(metricsAccess(config({ METRICS_PORT: '9464' }))).toEqual({ kind: 'off' });
    expect(metricsAccess(config({ METRICS_PORT: '9464', METRICS_TOKEN: 'scrape-token-0123456789' }))).toEqual(
      {
        kind: 'token',
        token: 'scrape-token-0123456789',
      },
    );
    expect(() => config({ METRICS_TOKEN: 'short' })).toThrow(/METRICS_TOKEN: must be at least 16 characters/);
    expect(() => config({ PORT: '4000', METRICS_PORT: '4000' })).toThrow(
      /METRICS_PORT must differ from PORT/,
    );
  });
});
