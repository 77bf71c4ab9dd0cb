import type { Page } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import type { RunningServer } from '../../src/server.js';
import { ClaimTask, CompleteTask, queueTask } from '../schema/agents-support.js';
import { CompleteAbTest, runningTest, seedCounts } from '../schema/experiments-support.js';
import { Promote, Register } from '../schema/finetuning-support.js';
import type { Caller, TestApp } from '../support/app.js';
import { fixedLookup } from '../support/https-server.js';
import type { Browser } from './support/browser.js';
import {
  card,
  openDashboard,
  pauseOverRest,
  ROLES,
  SetLiveMode,
  serveDashboard,
  WAIT_MS,
  waitForMatch,
  waitForText,
} from './support/dashboard.js';

let t: TestApp;
let server: RunningServer;
let browser: Browser;
let chairman: Caller;
let agent: Caller;
let page: Page;
let abTestId: string;
let pausedBeforeOpen: string;

serveDashboard(
  async (made) => {
    ({ t, server, browser } = made);
    chairman = await t.caller(['chairman'], { sub: 'chair-1' });
    agent = await t.caller(['agent'], { tenantId: chairman.tenantId });
    await t.graphql(SetLiveMode, { enabled: true }, chairman);
    const test = await runningTest(t, chairman);
    await seedCounts(t, chairman, test, [
      { observations: 400, successes: 120 },
      { observations: 400, successes: 168 },
    ]);
    abTestId = test.id;
    // Happened before the page opened: the feed shows it from the replay window.
    pausedBeforeOpen = await pauseOverRest(t, chairman, 'clo');
    await pauseOverRest(t, chairman, 'clo', 'resume');
    await t.app.services.relay.kick();
  },
  { egress: { lookup: fixedLookup({ 'api.acme-payments.com': '127.0.0.1' }) } },
);

describe('dashboard as the chairman', () => {
  it('opens with the token from the fragment, drops it from the address bar and shows every C-suite card', async () => {
    page = await openDashboard(browser, server.url, chairman);
    for (const role of ROLES) await page.waitForSelector(card(role, 'active'), { timeout: WAIT_MS });
    expect(page.url()).toBe(`${server.url}/dashboard`);
    expect(await page.evaluate(() => sessionStorage.getItem('boardroom.token'))).toBe(chairman.token);
    expect(await page.textContent('[data-role="cfo"] [data-field="tasks_completed"]')).toBe('0');
    expect(await page.getAttribute('[data-role="cfo"] [data-field="tasks_completed"]', 'data-value')).toBe(
      '0',
    );
    expect(await page.textContent('[data-role="cfo"] [data-field="cost_usd"]')).toBe('$0.00');
    expect(await page.textContent('[data-role="cfo"] [data-field="acceptance_rate"]')).toBe('—');
    expect(
      await page.getAttribute('[data-role="cfo"] [data-field="acceptance_rate"]', 'data-value'),
    ).toBeNull();
    await browser.screenshot(page, 'dashboard-open');
  });

  it('names the tenant and the signed-in user in the header', async () => {
    expect(await page.textContent('header [data-field="tenant_id"]')).toBe(chairman.tenantId);
    expect(await page.textContent('header [data-field="sub"]')).toBe('chair-1');
    expect(await page.textContent('header [data-field="roles"]')).toBe('(chairman)');
  });

  it('fills the feed from the replay window on load, with the date and the viewer’s time zone', async () => {
    const entry = `[data-event-id="${pausedBeforeOpen}"]`;
    await page.waitForSelector(entry, { timeout: WAIT_MS });
    expect(await page.textContent(entry)).toContain('CLO paused by chair-1');
    const time = await page.$eval(`${entry} time`, (element) => ({
      text: element.textContent ?? '',
      datetime: element.getAttribute('datetime') ?? '',
    }));
    expect(Math.abs(Date.parse(time.datetime) - Date.now())).toBeLessThan(10 * 60_000);
    // en-US in the test browser: "Nov 25, 2026, 6:51:02 PM UTC".
    expect(time.text).toMatch(/^[A-Z][a-z]{2} \d{1,2}, \d{4}, \d{1,2}:\d{2}:\d{2}\s[AP]M [A-Z]{2,5}/);
    expect(await page.textContent('.feed')).toContain('times in ');
    expect(await page.content()).not.toContain('secret reason');
  });

  it('pauses a role from its card after a confirmation, with a reason never shown back', async () => {
    await page.click('[data-role="cto"] button[data-action="pause"]');
    const dialog = await page.waitForSelector('dialog[data-dialog="pause"]', { timeout: WAIT_MS });
    expect(await dialog.textContent()).toContain('Pause CTO?');
    await browser.screenshot(page, 'dashboard-confirm-pause');
    // Cancelling changes nothing.
    await page.click('dialog[data-dialog="pause"] button:has-text("Cancel")');
    await page.waitForSelector('dialog[data-dialog="pause"]', { state: 'detached', timeout: WAIT_MS });
    expect(await page.$(card('cto', 'active'))).not.toBeNull();

    await page.click('[data-role="cto"] button[data-action="pause"]');
    await page.fill('dialog[data-dialog="pause"] textarea[name="reason"]', 'quarterly close, keep it quiet');
    await page.click('dialog[data-dialog="pause"] button[type="submit"]');
    await page.waitForSelector(card('cto', 'paused'), { timeout: WAIT_MS });
    await page.waitForSelector('dialog[data-dialog="pause"]', { state: 'detached', timeout: WAIT_MS });
    expect(await page.textContent('[data-status-message]')).toBe('CTO paused.');
    expect(await page.textContent('[data-role="cto"] .who')).toContain('Paused by chair-1 since');
    expect(await page.textContent('[data-alerts]')).toContain('CTO is paused by chair-1.');
    await page.waitForSelector('.feed li.pause:has-text("CTO paused by chair-1")', { timeout: WAIT_MS });
    const audit = await t.db.prisma.auditEntry.findFirstOrThrow({
      where: { tenantId: chairman.tenantId, action: 'agent.pause', targetId: 'cto' },
    });
    expect(audit.details).toMatchObject({ reason: 'quarterly close, keep it quiet' });
    expect(await page.content()).not.toContain('quarterly close');
    await browser.screenshot(page, 'dashboard-paused');
  });

  it('resumes a paused role from its card after a confirmation', async () => {
    await page.click('[data-role="cto"] button[data-action="resume"]');
    await page.waitForSelector('dialog[data-dialog="resume"]', { timeout: WAIT_MS });
    await page.click('dialog[data-dialog="resume"] button[type="submit"]');
    await page.waitForSelector(card('cto', 'active'), { timeout: WAIT_MS });
    expect(await page.textContent('[data-status-message]')).toBe('CTO resumed.');
    await page.waitForSelector('.feed li.resume:has-text("CTO resumed by chair-1")', { timeout: WAIT_MS });
  });

  it('shows the server’s refusal in the dialog and changes nothing', async () => {
    await t.graphql(SetLiveMode, { enabled: false }, chairman);
    await page.click('[data-role="cpo"] button[data-action="pause"]');
    await page.click('dialog[data-dialog="pause"] button[type="submit"]');
    const problem = await page.waitForSelector('dialog[data-dialog="pause"] [role="alert"]', {
      timeout: WAIT_MS,
    });
    expect(await problem.textContent()).toContain('dogfood live mode');
    await browser.screenshot(page, 'dashboard-pause-refused');
    await page.keyboard.press('Escape');
    await page.waitForSelector('dialog[data-dialog="pause"]', { state: 'detached', timeout: WAIT_MS });
    expect(await page.$(card('cpo', 'active'))).not.toBeNull();
    await t.graphql(SetLiveMode, { enabled: true }, chairman);
  });

  it('shows a pause made elsewhere on the card and its event id in the feed, never the reason', async () => {
    const eventId = await pauseOverRest(t, chairman, 'ceo');
    await page.waitForSelector(card('ceo', 'paused'), { timeout: WAIT_MS });
    await page.waitForSelector(`[data-event-id="${eventId}"]`, { timeout: WAIT_MS });
    expect(await page.textContent('[data-role="ceo"]')).toContain('chair-1');
    expect(await page.content()).not.toContain('secret reason');
  });

  it('shows a new connector and a call of it in the feed, the call with its outcome', async () => {
    const created = await t.rest('POST', '/api/v1/forge/connectors', {
      caller: chairman,
      body: {
        template: { name: 'Payments', base_url: 'https://api.acme-payments.com/v1', auth_type: 'none' },
      },
    });
    expect(created.status).toBe(201);
    const change = await t.db.prisma.outboxEvent.findFirstOrThrow({
      where: { tenantId: chairman.tenantId, type: 'CONNECTOR_CHANGED' },
    });
    await page.waitForSelector(`[data-event-id="${change.id}"]`, { timeout: WAIT_MS });
    expect(await page.textContent(`[data-event-id="${change.id}"]`)).toContain(
      `Connector ${created.body.id.slice(0, 8)} created`,
    );
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

  it('counts a completed task in the vitals, formatted for people, and in the hourly trend', async () => {
    const id = await queueTask(t, chairman, 'cfo');
    expect((await t.graphql(ClaimTask, { role: 'cfo' }, agent)).data?.claimTask?.id).toBe(id);
    const completed = await t.graphql(
      CompleteTask,
      { id, input: { tokensUsed: 1234567, costUsd: 1234.5 } },
      agent,
    );
    expect(completed.data?.completeTask.status).toBe('completed');

    await waitForText(page, '[data-role="cfo"] [data-field="tasks_completed"]', '1');
    expect(await page.textContent('[data-role="cfo"] [data-field="tokens_used"]')).toBe('1,234,567');
    expect(await page.textContent('[data-role="cfo"] [data-field="cost_usd"]')).toBe('$1,234.50');
    expect(await page.getAttribute('[data-role="cfo"] [data-field="cost_usd"]', 'data-value')).toBe('1234.5');
    await waitForText(page, '[data-task-status="completed"] .count', '1');

    await page.selectOption('.trends select', 'cfo');
    await page.waitForSelector('[data-trends="cfo"] [data-chart="tasks"] canvas', { timeout: WAIT_MS });
    await waitForMatch(
      page,
      '[data-trends="cfo"] [data-chart="cost"] [data-field="summary"]',
      /^\$1,234\.50 in 24 hours; most in the hour ending .+ \(\$1,234\.50\)\.$/,
    );
    expect(await page.textContent('[data-trends="cfo"] [data-chart="tasks"] [data-field="summary"]')).toMatch(
      /^1 completed and 0 failed in 24 hours; busiest hour ending /,
    );
    await page.locator('.trends').scrollIntoViewIfNeeded();
    await browser.screenshot(page, 'dashboard-trends');
  });

  it('shows every event of a burst exactly once across a dropped connection', async () => {
    const ids = [await pauseOverRest(t, chairman, 'coo')];
    // Offline in the middle of the burst: the three pauses that follow happen while the page is away.
    await page.evaluate(() => window.boardroomDashboard?.disconnect());
    await page.waitForSelector('[data-connection="offline"]', { timeout: WAIT_MS });
    expect(await page.textContent('[data-alerts]')).toContain('Live updates are interrupted');
    for (const role of ['cto', 'cmo', 'cpo']) ids.push(await pauseOverRest(t, chairman, role));
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
  });

  it('shows a promotion live, and the running A/B test with its rates, intervals and significance', async () => {
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
    expect(await page.textContent('[data-base-model="gpt-4o-mini"] [data-field="version_number"]')).toBe(
      'v1',
    );

    // The A/B test started before the page opened (its results change without an event).
    const test = `[data-ab-test="${abTestId}"]`;
    await page.waitForSelector(test, { timeout: WAIT_MS });
    const pValue = `${test} [data-field="chi_squared_p_value"]`;
    expect(Number(await page.getAttribute(pValue, 'data-value')).toPrecision(3)).toBe('0.000407');
    expect(await page.textContent(pValue)).toBe('< 0.001');
    expect(await page.textContent(`${test} [data-verdict]`)).toBe('significant');
    expect(await page.getAttribute(test, 'data-analysis')).toBe('fixed_horizon');
    expect(await page.textContent(`${test} [data-field="analysis"]`)).toContain('Fixed-horizon analysis');
    expect(await page.$$(`${test} [data-field="confidence_sequence"]`)).toHaveLength(0);
    const rates = await page.$$eval(`${test} [data-field="completion_rate"]`, (cells) =>
      cells.map((cell) => cell.textContent),
    );
    expect(rates).toEqual(['30%', '42%']);
    const intervals = await page.$$eval(`${test} [data-field="completion_rate_ci"]`, (cells) =>
      cells.map((cell) => [Number(cell.getAttribute('data-lower')), Number(cell.getAttribute('data-upper'))]),
    );
    // Wilson 95% intervals of 120/400 and 168/400.
    expect(intervals[0]?.[0]).toBeCloseTo(0.2571, 3);
    expect(intervals[0]?.[1]).toBeCloseTo(0.3468, 3);
    expect(intervals[1]?.[0]).toBeCloseTo(0.3727, 3);
    expect(intervals[1]?.[1]).toBeCloseTo(0.4689, 3);
    expect(
      await page.textContent(`${test} tbody tr:first-child [data-field="completion_rate_ci"]`),
    ).toContain('25.7% – 34.7%');
    await page.locator(test).scrollIntoViewIfNeeded();
    await browser.screenshot(page, 'dashboard-models-and-tests');
  });

  it('shows a canary of a model in production with its share and what its analysis says, live', async () => {
    const row = '[data-base-model="gpt-4o-mini"]';
    await page.waitForSelector(row, { timeout: WAIT_MS });
    expect(await page.textContent(`${row} td:last-child`)).toBe('None');
    const registered = await t.graphql(
      Register,
      {
        input: {
          baseModel: 'gpt-4o-mini',
          provider: 'openai',
          trainingDataHash: 'sha256:board-memos-2',
          hyperparameters: { epochs: 4 },
          evaluationMetrics: { accuracy: 0.93 },
        },
      },
      chairman,
    );
    const policy = await t.graphql(
      `mutation { setCanaryPolicy(baseModel: "gpt-4o-mini", input: {
        guardrails: [{ metric: "failure_rate", direction: "lower_is_better", tolerance: 0.05 }],
        minimumTasks: 50, maxDurationSeconds: 3600, action: "rollback_automatically" }) { action } }`,
      undefined,
      chairman,
    );
    expect(policy.errors).toBeUndefined();
    const canary = await t.graphql(
      Promote,
      { id: registered.data?.registerModelVersion.id as string, canaryTrafficPct: 20 },
      chairman,
    );
    expect(canary.errors).toBeUndefined();
    const cell = `${row} [data-field="canary"]`;
    await page.waitForSelector(`${cell}[data-state="collecting"]`, { timeout: WAIT_MS });
    expect(await page.textContent(`${cell} p`)).toBe(
      'v2, 20% of conversations: collecting outcomes (0 of at least 50 tasks)',
    );
    await page.locator(row).scrollIntoViewIfNeeded();
    await browser.screenshot(page, 'dashboard-canary');
  });

  it('reads “no data yet” for a running test without observations, not “not significant”', async () => {
    const test = await runningTest(t, chairman);
    const row = `[data-ab-test="${test.id}"]`;
    await page.waitForSelector(row, { timeout: WAIT_MS });
    expect(await page.textContent(`${row} [data-verdict]`)).toBe('no data yet');
    expect(await page.textContent(`${row} [data-field="chi_squared_p_value"]`)).toBe('—');
    expect((await t.graphql(CompleteAbTest, { id: test.id }, chairman)).errors).toBeUndefined();
    await page.waitForSelector(row, { state: 'detached', timeout: WAIT_MS });
  });

  it('shows a pause made while disconnected in the feed after reconnecting, though the feed was empty', async () => {
    const quiet = await t.caller(['chairman'], { sub: 'chair-2' });
    await t.graphql(SetLiveMode, { enabled: true }, quiet);
    const fresh = await openDashboard(browser, server.url, quiet);
    await fresh.waitForSelector(card('ceo', 'active'), { timeout: WAIT_MS });
    expect(await fresh.$$('[data-event-id]')).toHaveLength(0);
    expect(await fresh.textContent('.feed')).toContain('Nothing has happened yet.');

    await fresh.evaluate(() => window.boardroomDashboard?.disconnect());
    await fresh.waitForSelector('[data-connection="offline"]', { timeout: WAIT_MS });
    const eventId = await pauseOverRest(t, quiet, 'ceo');
    await fresh.evaluate(() => window.boardroomDashboard?.reconnect());

    // Well within the 30 s refresh: the resumed subscription replays the pause.
    await fresh.waitForSelector(`[data-event-id="${eventId}"]`, { timeout: WAIT_MS });
    await fresh.waitForSelector(card('ceo', 'paused'), { timeout: WAIT_MS });
    await fresh.close();
  });

  it('follows an A/B test started after the page opened live, until it completes', async () => {
    const test = await runningTest(t, chairman);
    const row = `[data-ab-test="${test.id}"]`;
    await page.waitForSelector(row, { timeout: WAIT_MS });

    await seedCounts(t, chairman, test, [
      { observations: 300, successes: 60 },
      { observations: 300, successes: 99 },
    ]);
    await waitForText(page, `${row} [data-verdict]`, 'significant');
    expect(
      await page.$$eval(`${row} [data-field="completion_rate"]`, (cells) =>
        cells.map((cell) => cell.textContent),
      ),
    ).toEqual(['20%', '33%']);

    expect((await t.graphql(CompleteAbTest, { id: test.id }, chairman)).errors).toBeUndefined();
    await page.waitForSelector(row, { state: 'detached', timeout: WAIT_MS });
  });

  it('shows a sequential test’s own decision and intervals, live, and says it is the sequential analysis', async () => {
    const test = await runningTest(t, chairman, 2, undefined, 'sequential');
    const row = `[data-ab-test="${test.id}"]`;
    await page.waitForSelector(row, { timeout: WAIT_MS });
    expect(await page.getAttribute(row, 'data-analysis')).toBe('sequential');
    expect(await page.textContent(`${row} [data-field="analysis"]`)).toContain('Sequential analysis');
    expect(await page.textContent(`${row} [data-verdict]`)).toBe('no data yet');

    // 20% against 33% of 300 each: the z-test read now would call it (p ≈ 0.0003); the sequential
    // analysis, valid at every look, asks for more.
    await seedCounts(t, chairman, test, [
      { observations: 300, successes: 60 },
      { observations: 300, successes: 99 },
    ]);
    await waitForText(page, `${row} [data-verdict]`, 'collecting evidence');
    const cell = `${row} tbody tr:nth-child(2) [data-field="confidence_sequence"]`;
    const [lower, upper] = [
      Number(await page.getAttribute(cell, 'data-lower')),
      Number(await page.getAttribute(cell, 'data-upper')),
    ];
    expect(lower).toBeLessThan(0);
    expect(upper).toBeGreaterThan(0.13);
    expect(await page.textContent(cell)).toMatch(/^\+13 pts \(.+ pts to \+.+ pts\)$/);
    expect(await page.$$(`${row} [data-field="chi_squared_p_value"]`)).toHaveLength(0);
    expect(
      Number(await page.getAttribute(`${row} [data-field="always_valid_p_value"]`, 'data-value')),
    ).toBeGreaterThan(0.05);
    await page.locator(row).scrollIntoViewIfNeeded();
    await browser.screenshot(page, 'dashboard-sequential-collecting');

    // Half of 600 now convert in the treatment: shown.
    await seedCounts(t, chairman, test, [
      { observations: 300, successes: 60 },
      { observations: 600, successes: 300 },
    ]);
    await waitForText(page, `${row} [data-verdict]`, 'significant');
    expect(await page.getAttribute(cell, 'data-decision')).toBe('significant');
    expect(Number(await page.getAttribute(cell, 'data-lower'))).toBeGreaterThan(0);
    await page.locator(row).scrollIntoViewIfNeeded();
    await browser.screenshot(page, 'dashboard-sequential-significant');

    expect((await t.graphql(CompleteAbTest, { id: test.id }, chairman)).errors).toBeUndefined();
    await page.waitForSelector(row, { state: 'detached', timeout: WAIT_MS });
  });

  it('signs out: the token leaves the tab and the token prompt says so', async () => {
    await page.click('button[data-sign-out]');
    await page.waitForSelector('[data-token-problem="signed-out"]', { timeout: WAIT_MS });
    expect(await page.evaluate(() => sessionStorage.getItem('boardroom.token'))).toBeNull();
    await browser.screenshot(page, 'dashboard-signed-out');
  });

  it('made no request to another host and none with the token in its address', () => {
    expect(browser.foreignRequests(server.url)).toEqual([]);
    expect(browser.requests().some((url) => url.includes('token='))).toBe(false);
  });

  it('reported no Content-Security-Policy violation', () => {
    expect(browser.cspViolations()).toEqual([]);
  });
});
