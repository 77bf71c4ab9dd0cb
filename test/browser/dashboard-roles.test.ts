import { describe, expect, it } from 'vitest';
import { signToken } from '../../src/auth/tokens.js';
import type { RunningServer } from '../../src/server.js';
import { ClaimTask, CompleteTask, queueTask } from '../schema/agents-support.js';
import { type Caller, TEST_SECRET, type TestApp } from '../support/app.js';
import type { Browser } from './support/browser.js';
import { card, openDashboard, ROLES, SetLiveMode, serveDashboard, WAIT_MS } from './support/dashboard.js';

let t: TestApp;
let server: RunningServer;
let browser: Browser;
let chairman: Caller;
let advised: string;

serveDashboard(async (made) => {
  ({ t, server, browser } = made);
  chairman = await t.caller(['chairman'], { sub: 'chair-roles' });
  await t.graphql(SetLiveMode, { enabled: true }, chairman);
  const agent = await t.caller(['agent'], { tenantId: chairman.tenantId });
  advised = await queueTask(t, chairman, 'cmo', 'Plan the launch');
  await t.graphql(ClaimTask, { role: 'cmo' }, agent);
  await t.graphql(
    CompleteTask,
    {
      id: advised,
      input: {
        tokensUsed: 10,
        costUsd: 0.01,
        recommendations: [{ summary: 'Launch in May', predictedOutcome: '+5%' }],
      },
    },
    agent,
  );
});

describe.each([
  ['operator', 'op-1'],
  ['member', 'member-1'],
] as const)('dashboard as a %s', (role, sub) => {
  it('offers no pause or resume on any card', async () => {
    const caller = await t.caller([role], { tenantId: chairman.tenantId, sub });
    const page = await openDashboard(browser, server.url, caller);
    for (const one of ROLES) await page.waitForSelector(card(one, 'active'), { timeout: WAIT_MS });
    expect(await page.$$('[data-role] button')).toEqual([]);
    expect(await page.textContent('header [data-field="roles"]')).toBe(`(${role})`);
    await browser.screenshot(page, `dashboard-${role}`);
    await page.close();
  });

  it('shows the server’s refusal of a pause forced through the page, and nothing changes', async () => {
    const caller = await t.caller([role], { tenantId: chairman.tenantId, sub });
    const page = await openDashboard(browser, server.url, caller);
    await page.evaluate(() => window.boardroomDashboard?.confirm('ceo', 'pause'));
    await page.click('dialog[data-dialog="pause"] button[type="submit"]');
    const problem = await page.waitForSelector('dialog[data-dialog="pause"] [role="alert"]', {
      timeout: WAIT_MS,
    });
    expect(await problem.textContent()).toBe('Not allowed for your role');
    await browser.screenshot(page, `dashboard-${role}-refused`);
    const ceo = await t.db.prisma.agentRole.findFirstOrThrow({
      where: { tenantId: chairman.tenantId, role: 'ceo' },
    });
    expect(ceo.paused).toBe(false);
    await page.close();
  });
});

describe.each([
  ['chairman', 'chair-roles', 'accept', 'matched'],
  ['operator', 'op-1', 'reject', 'missed'],
  ['member', 'member-1', 'accept', 'missed'],
] as const)('recommendations as a %s', (role, sub, decision, outcome) => {
  it(`${decision}s a recommendation and records its outcome as ${outcome}`, async () => {
    const caller = await t.caller([role], { tenantId: chairman.tenantId, sub });
    const page = await openDashboard(browser, server.url, caller);
    await page.evaluate((id) => window.boardroomDashboard?.openTask(id), advised);
    const item = `[data-task-detail="${advised}"] [data-recommendation-id]`;
    await page.waitForSelector(item, { timeout: WAIT_MS });
    await page.click(`${item} button[data-decide="${decision}"]`);
    await page.waitForSelector(`${item}[data-decision="${decision}ed"]`, { timeout: WAIT_MS });
    await page.click(`${item} button[data-outcome-button="${outcome}"]`);
    await page.waitForSelector(`${item}[data-outcome="${outcome}"]`, { timeout: WAIT_MS });
    const stored = await t.db.prisma.recommendation.findFirstOrThrow({ where: { taskId: advised } });
    expect([stored.accepted, stored.outcomeMatched, stored.decidedBy]).toEqual([
      decision === 'accept',
      outcome === 'matched',
      sub,
    ]);
    await page.close();
  });
});

describe('dashboard tokens', () => {
  it('says an expired token has expired', async () => {
    const expired = await signToken(TEST_SECRET, {
      tenantId: chairman.tenantId,
      sub: 'late',
      roles: ['chairman'],
      ttl: '1 hour ago',
    });
    const page = await browser.open(`${server.url}/dashboard#token=${expired}`);
    const problem = await page.waitForSelector('[data-token-problem="expired"]', { timeout: WAIT_MS });
    expect(await problem.textContent()).toBe(
      'Your token has expired. Paste a new one (npm run token prints one) to go on.',
    );
    expect(await page.evaluate(() => sessionStorage.getItem('boardroom.token'))).toBeNull();
    await browser.screenshot(page, 'dashboard-token-expired');
    await page.close();
  });

  it('says an invalid token was refused, and why', async () => {
    const foreign = await signToken('another-secret-that-is-long-enough-for-hs256', {
      tenantId: chairman.tenantId,
      sub: 'stranger',
      roles: ['chairman'],
    });
    const page = await browser.open(`${server.url}/dashboard#token=${foreign}`);
    const problem = await page.waitForSelector('[data-token-problem="invalid"]', { timeout: WAIT_MS });
    expect(await problem.textContent()).toContain(
      'This token was refused: Invalid token: signature verification failed',
    );
    await page.close();
  });

  it('says a valid token whose roles may not open the console is not enough', async () => {
    const agent = await t.caller(['agent'], { tenantId: chairman.tenantId });
    const page = await browser.open(`${server.url}/dashboard#token=${agent.token}`);
    const problem = await page.waitForSelector('[data-token-problem="underprivileged"]', {
      timeout: WAIT_MS,
    });
    expect(await problem.textContent()).toBe(
      'This token is valid but its roles (agent) may not open the console: it needs a chairman, operator or member token of the tenant.',
    );
    await browser.screenshot(page, 'dashboard-token-underprivileged');
    await page.close();
  });

  it('says so when the token expires while the page is open', async () => {
    const brief = await signToken(TEST_SECRET, {
      tenantId: chairman.tenantId,
      sub: 'brief',
      roles: ['member'],
      ttl: '3s',
    });
    const page = await browser.open(`${server.url}/dashboard#token=${brief}`);
    await page.waitForSelector('[data-connection="live"]', { timeout: WAIT_MS });
    // The server ends the socket at `exp` with 4401 "Token expired".
    await page.waitForSelector('[data-token-problem="expired"]', { timeout: 10_000 });
    await page.close();
  });

  it('asks for a token when there is none, with a labelled field', async () => {
    const page = await browser.open(`${server.url}/dashboard`);
    await page.waitForSelector('textarea[name="token"]', { timeout: WAIT_MS });
    expect(await page.getByLabel('Token').count()).toBe(1);
    await browser.screenshot(page, 'dashboard-token-form');
    await page.close();
  });

  it('requested nothing from another host, sent no token in an address, and broke no CSP rule', () => {
    expect(browser.foreignRequests(server.url)).toEqual([]);
    expect(browser.requests().some((url) => url.includes('token='))).toBe(false);
    expect(browser.cspViolations()).toEqual([]);
  });
});
