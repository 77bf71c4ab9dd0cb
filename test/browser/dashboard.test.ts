import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
// @ts-expect-error the build script is plain JavaScript without type declarations
import { buildDashboard } from '../../scripts/build-dashboard.mjs';
import { summarizeExperiment } from '../../src/domain/experiments/results.js';
import { graphql } from '../../src/generated/graphql/index.js';
import type { RunningServer } from '../../src/server.js';
import { ClaimTask, CompleteTask, queueTask } from '../schema/agents-support.js';
import { CompleteAbTest, runningTest, seedCounts } from '../schema/experiments-support.js';
import { Promote, Register } from '../schema/finetuning-support.js';
import { type Caller, createTestApp, type TestApp } from '../support/app.js';
import { fixedLookup } from '../support/https-server.js';
import { listen } from '../support/ws.js';
import { type Browser, launchBrowser } from './support/browser.js';

const SetLiveMode = graphql(`
  mutation DashboardLiveMode($enabled: Boolean!) {
    setDogfoodLiveMode(enabled: $enabled) {
      dogfoodLiveMode
    }
  }
`);

const ROLES = ['ceo', 'cfo', 'coo', 'cto', 'cmo', 'cpo', 'chro', 'clo'];
/** Bound of every wait on the page (the requirement is 1 s for a pause, 2 s for vitals). */
const WAIT_MS = 5000;

let t: TestApp;
let server: RunningServer;
let browser: Browser;
let chairman: Caller;
let agent: Caller;
let page: Page;
let abTestId: string;

beforeAll(async () => {
  await buildDashboard();
  t = await createTestApp({ egress: { lookup: fixedLookup({ 'api.acme-payments.com': '127.0.0.1' }) } });
  server = await listen(t);
  browser = await launchBrowser();
  chairman = await t.caller(['chairman'], { sub: 'chair-1' });
  agent = await t.caller(['agent'], { tenantId: chairman.tenantId });
  await t.graphql(SetLiveMode, { enabled: true }, chairman);
  const test = await runningTest(t, chairman);
  await seedCounts(t, chairman, test, [
    { observations: 400, successes: 120 },
    { observations: 400, successes: 168 },
  ]);
  abTestId = test.id;
});
afterAll(async () => {
  await browser?.close();
  await server?.close();
  await t?.close();
});

async function pause(role: string): Promise<string> {
  const response = await t.rest('POST', `/api/v1/dogfood/agents/${role}/pause`, {
    caller: chairman,
    body: { actor_user_id: 'chair-1', reason: 'secret reason' },
  });
  expect(response.status).toBe(200);
  return response.body.event_id;
}

const card = (role: string, state: string) => `[data-role="${role}"][data-state="${state}"]`;

describe('dashboard', () => {
  it('opens with the token from the fragment, drops it from the address bar and shows every C-suite card', async () => {
    page = await browser.open(`${server.url}/dashboard#token=${chairman.token}`);
    for (const role of ROLES) await page.waitForSelector(card(role, 'active'), { timeout: WAIT_MS });
    await page.waitForSelector('[data-connection="live"]', { timeout: WAIT_MS });
    expect(page.url()).toBe(`${server.url}/dashboard`);
    expect(await page.evaluate(() => sessionStorage.getItem('boardroom.token'))).toBe(chairman.token);
    expect(await page.textContent('[data-role="cfo"] [data-field="tasks_completed"]')).toBe('0');
    expect(await page.textContent('[data-role="cfo"] [data-field="cost_usd"]')).toBe('0');
    await browser.screenshot(page, 'dashboard-open');
  });

  it('shows a pause on the card and its event id in the feed, never the reason', async () => {
    const eventId = await pause('ceo');
    await page.waitForSelector(card('ceo', 'paused'), { timeout: WAIT_MS });
    await page.waitForSelector(`[data-event-id="${eventId}"]`, { timeout: WAIT_MS });
    expect(await page.textContent('[data-role="ceo"]')).toContain('chair-1');
    expect(await page.content()).not.toContain('secret reason');
    await browser.screenshot(page, 'dashboard-paused');
  });

  it('shows a connector call in the feed with its outcome', async () => {
    const created = await t.rest('POST', '/api/v1/forge/connectors', {
      caller: chairman,
      body: {
        template: { name: 'Payments', base_url: 'https://api.acme-payments.com/v1', auth_type: 'none' },
      },
    });
    expect(created.status).toBe(201);
    const operator = await t.caller(['operator'], { tenantId: chairman.tenantId });
    const probe = await t.rest('POST', `/api/v1/forge/connectors/${created.body.id}/test`, {
      caller: operator,
    });
    expect(probe.status).toBe(502);
    const event = await t.db.prisma.outboxEvent.findFirstOrThrow({
      where: { tenantId: chairman.tenantId, type: 'CONNECTOR_INVOKED' },
    });
    await page.waitForSelector(`[data-event-id="${event.id}"]`, { timeout: WAIT_MS });
    expect(await page.textContent(`[data-event-id="${event.id}"]`)).toContain('HEAD /v1 → address_refused');
  });

  it('counts a completed task in the vitals', async () => {
    const id = await queueTask(t, chairman, 'cfo');
    expect((await t.graphql(ClaimTask, { role: 'cfo' }, agent)).data?.claimTask?.id).toBe(id);
    const completed = await t.graphql(CompleteTask, { id, input: { tokensUsed: 120, costUsd: 0.25 } }, agent);
    expect(completed.data?.completeTask.status).toBe('completed');

    await page.waitForFunction(
      () => document.querySelector('[data-role="cfo"] [data-field="tasks_completed"]')?.textContent === '1',
      undefined,
      { timeout: WAIT_MS },
    );
    expect(await page.textContent('[data-role="cfo"] [data-field="tokens_used"]')).toBe('120');
    expect(await page.textContent('[data-role="cfo"] [data-field="cost_usd"]')).toBe('0.25');
    await page.waitForFunction(
      () => document.querySelector('[data-task-status="completed"] .count')?.textContent === '1',
      undefined,
      { timeout: WAIT_MS },
    );
    await browser.screenshot(page, 'dashboard-task-completed');
  });

  it('shows every event of a burst exactly once across a dropped connection', async () => {
    const ids = [await pause('coo')];
    // Offline in the middle of the burst: the three pauses that follow happen while the page is away.
    await page.evaluate(() => window.boardroomDashboard?.disconnect());
    await page.waitForSelector('[data-connection="offline"]', { timeout: WAIT_MS });
    for (const role of ['cto', 'cmo', 'cpo']) ids.push(await pause(role));
    await page.evaluate(() => window.boardroomDashboard?.reconnect());

    for (const role of ['coo', 'cto', 'cmo', 'cpo']) {
      await page.waitForSelector(card(role, 'paused'), { timeout: WAIT_MS });
    }
    for (const id of ids) await page.waitForSelector(`[data-event-id="${id}"]`, { timeout: WAIT_MS });
    await page.waitForSelector('[data-connection="live"]', { timeout: WAIT_MS });
    const shown = await page.$$eval('[data-event-id]', (items) =>
      items.map((item) => item.getAttribute('data-event-id')),
    );
    expect(new Set(shown).size).toBe(shown.length);
    for (const id of ids) expect(shown.filter((value) => value === id)).toHaveLength(1);
    await browser.screenshot(page, 'dashboard-after-reconnect');
  });

  it('shows a promotion live, and the running A/B test with its p-value and significance', async () => {
    const registered = await t.graphql(
      Register,
      {
        input: {
          baseModel: 'gpt-4o-mini',
          provider: 'openai',
          trainingDataHash: 'sha256:board-memos',
          hyperparameters: { epochs: 3 },
          evaluationMetrics: { accuracy: 0.91 },
        },
      },
      chairman,
    );
    const id = registered.data?.registerModelVersion.id as string;
    await t.graphql(Promote, { id }, chairman);
    await page.waitForSelector('[data-base-model="gpt-4o-mini"]', { timeout: WAIT_MS });
    expect(await page.textContent('[data-base-model="gpt-4o-mini"]')).toContain('v1');

    // The A/B test started before the page opened (its results change without an event).
    const row = `[data-ab-test="${abTestId}"]`;
    await page.waitForSelector(row, { timeout: WAIT_MS });
    expect(await page.textContent(`${row} [data-field="chi_squared_p_value"]`)).toBe('0.000407');
    expect(await page.textContent(`${row} .badge`)).toBe('significant');
    await browser.screenshot(page, 'dashboard-models-and-tests');
  });

  it('shows a pause made while disconnected in the feed after reconnecting, though the feed was empty', async () => {
    const quiet = await t.caller(['chairman'], { sub: 'chair-2' });
    await t.graphql(SetLiveMode, { enabled: true }, quiet);
    const fresh = await browser.open(`${server.url}/dashboard#token=${quiet.token}`);
    await fresh.waitForSelector('[data-connection="live"]', { timeout: WAIT_MS });
    await fresh.waitForSelector(card('ceo', 'active'), { timeout: WAIT_MS });
    expect(await fresh.$$('[data-event-id]')).toHaveLength(0);

    await fresh.evaluate(() => window.boardroomDashboard?.disconnect());
    await fresh.waitForSelector('[data-connection="offline"]', { timeout: WAIT_MS });
    const response = await t.rest('POST', '/api/v1/dogfood/agents/ceo/pause', {
      caller: quiet,
      body: { actor_user_id: 'chair-2', reason: 'secret reason' },
    });
    expect(response.status).toBe(200);
    await fresh.evaluate(() => window.boardroomDashboard?.reconnect());

    // Well within the 30 s refresh: the resumed subscription replays the pause.
    await fresh.waitForSelector(`[data-event-id="${response.body.event_id}"]`, { timeout: WAIT_MS });
    await fresh.waitForSelector(card('ceo', 'paused'), { timeout: WAIT_MS });
    await browser.screenshot(fresh, 'dashboard-resumed-from-start');
    await fresh.close();
  });

  it('shows an A/B test started after the page opened and follows its results live, until it completes', async () => {
    const test = await runningTest(t, chairman);
    const row = `[data-ab-test="${test.id}"]`;
    await page.waitForSelector(row, { timeout: WAIT_MS });

    const counts = [
      { observations: 300, successes: 60 },
      { observations: 300, successes: 99 },
    ];
    await seedCounts(t, chairman, test, counts);
    const expected = summarizeExperiment(
      counts.map((count, index) => ({ id: `${index}`, name: `${index}`, weight: 1, ...count })),
      0.05,
    ).chiSquaredPValue?.toPrecision(3);
    await page.waitForFunction(
      ({ selector, text }) => document.querySelector(selector)?.textContent === text,
      { selector: `${row} [data-field="chi_squared_p_value"]`, text: expected },
      { timeout: WAIT_MS },
    );
    expect(await page.textContent(`${row} .badge`)).toBe('significant');
    await browser.screenshot(page, 'dashboard-ab-test-live');

    expect((await t.graphql(CompleteAbTest, { id: test.id }, chairman)).errors).toBeUndefined();
    await page.waitForSelector(row, { state: 'detached', timeout: WAIT_MS });
  });

  it('asks for a token when there is none, and made no request to another host', async () => {
    const blank = await browser.open(`${server.url}/dashboard`);
    await blank.waitForSelector('textarea[aria-label="Token"]', { timeout: WAIT_MS });
    await browser.screenshot(blank, 'dashboard-token-form');
    await blank.close();
    expect(browser.foreignRequests(server.url)).toEqual([]);
    expect(browser.requests().some((url) => url.includes('token='))).toBe(false);
  });

  it('reported no Content-Security-Policy violation', () => {
    expect(browser.cspViolations()).toEqual([]);
  });
});

declare global {
  interface Window {
    boardroomDashboard?: { disconnect(): void; reconnect(): void };
  }
}
