import type { Page } from 'playwright-core';
import { afterAll, describe, expect, it } from 'vitest';
import type { RunningServer } from '../../src/server.js';
import { UPSTREAM_HOST as HOST, POST_CUSTOMER, withConnectorUpstream } from '../rest/connectors-support.js';
import type { Caller, TestApp } from '../support/app.js';
import type { TestHttpsServer } from '../support/https-server.js';
import { accessibilityViolations, describeViolations } from './support/axe.js';
import { type Browser, launchBrowser } from './support/browser.js';
import { openDashboard, WAIT_MS, waitForMatch, waitForText } from './support/dashboard.js';

// The console's actions on gated connector calls and budgets, as a chairman, an operator and a member.

let upstream: TestHttpsServer;
let t: TestApp;
let server: RunningServer;
let browser: Browser;
let chairman: Caller;
let operator: Caller;
let member: Caller;
let agent: Caller;
/** Gated writes that the chairman or an operator decides. */
let shared: string;
/** Gated writes that only the chairman decides. */
let chairmanOnly: string;

withConnectorUpstream(async (started) => {
  ({ upstream, t, server } = started);
  upstream.route('/v1/customers', (_request, body, response) => {
    response
      .writeHead(201, { 'content-type': 'application/json' })
      .end(JSON.stringify({ id: 'cus_2', ...JSON.parse(body || '{}') }));
  });
  browser = await launchBrowser();
  chairman = await t.caller(['chairman'], { sub: 'chair-console' });
  const same = { tenantId: chairman.tenantId };
  operator = await t.caller(['operator'], { ...same, sub: 'op-console' });
  member = await t.caller(['member'], { ...same, sub: 'member-console' });
  agent = await t.caller(['agent'], { ...same, sub: 'agent-console' });
  shared = await gatedConnector('Payments', ['chairman', 'operator']);
  chairmanOnly = await gatedConnector('Treasury', ['chairman']);
});
afterAll(() => browser?.close());

async function gatedConnector(name: string, approverRoles: string[]): Promise<string> {
  const created = await t.rest('POST', '/api/v1/forge/connectors', {
    caller: chairman,
    body: {
      template: {
        name,
        base_url: `https://${HOST}:${upstream.port}/v1`,
        auth_type: 'none',
        endpoints: [POST_CUSTOMER],
      },
    },
  });
  expect(created.status).toBe(201);
  const id = created.body.id as string;
  const policy = await t.rest('PUT', `/api/v1/forge/connectors/${id}/approval-policy`, {
    caller: chairman,
    body: { rules: [{ methods: ['POST'] }], approver_roles: approverRoles, expires_in_seconds: 3600 },
  });
  expect(policy.status).toBe(200);
  return id;
}

/** An agent's call of a gated endpoint: kept pending; answers the approval id. */
async function requestCall(connectorId: string, email: string): Promise<string> {
  const answer = await t.rest('POST', `/api/v1/forge/connectors/${connectorId}/invoke`, {
    caller: agent,
    body: { endpoint: { method: 'POST', path: '/customers' }, input: { body: { email } } },
  });
  expect(answer.status).toBe(202);
  return answer.body.id as string;
}

const postsReceived = () =>
  upstream.received.filter((request) => request.method === 'POST' && request.url === '/v1/customers').length;

const stored = (id: string) => t.db.prisma.connectorCallApproval.findUniqueOrThrow({ where: { id } });

const item = (id: string) => `[data-approvals] [data-approval-id="${id}"]`;

/** Decides a request from its inbox entry: its button, then the confirmation with a note. */
async function decideFromInbox(page: Page, id: string, decision: string, note: string): Promise<void> {
  await page.click(`${item(id)} button[data-decide-approval="${decision}"]`);
  await page.waitForSelector('dialog[data-dialog="approval"]', { timeout: WAIT_MS });
  await page.fill('dialog[data-dialog="approval"] textarea[name="note"]', note);
  await page.click('dialog[data-dialog="approval"] button[type="submit"]');
  await page.waitForSelector('dialog[data-dialog="approval"]', { state: 'detached', timeout: WAIT_MS });
}

/** Opens a confirmation through window.boardroomDashboard, submits it and answers its refusal. */
async function forcedRefusal(
  page: Page,
  kind: 'approval' | 'budget',
  open: (target: string) => void,
  target: string,
): Promise<string> {
  await page.evaluate(open, target);
  const dialog = `dialog[data-dialog="${kind}"]`;
  await page.waitForSelector(dialog, { timeout: WAIT_MS });
  if (kind === 'budget') await page.fill(`${dialog} input[name="limit"]`, '5');
  await page.click(`${dialog} button[type="submit"]`);
  const problem = await page.waitForSelector(`${dialog} [role="alert"]`, { timeout: WAIT_MS });
  return (await problem.textContent()) ?? '';
}

describe('the console as the chairman', () => {
  let page: Page;
  let approve: string;
  let reject: string;
  let changes: string;

  it('lists the calls waiting for a decision with what they would send, and counts them in the summary', async () => {
    approve = await requestCall(chairmanOnly, 'ada@example.com');
    reject = await requestCall(shared, 'bob@example.com');
    changes = await requestCall(shared, 'cy@example.com');
    page = await openDashboard(browser, server.url, chairman);
    for (const id of [approve, reject, changes]) {
      await page.waitForSelector(`${item(id)}[data-status="pending"]`, { timeout: WAIT_MS });
    }
    await waitForText(page, '[data-approvals-waiting] .count', '3');
    expect(await page.textContent(`${item(approve)} [data-field="input"]`)).toContain('ada@example.com');
    expect(await page.textContent(`${item(approve)} h3`)).toBe('POST /customers');
    expect(await page.textContent(`${item(approve)} [data-field="connector"]`)).toBe('Treasury');
    expect(await page.$$(`${item(approve)} button[data-decide-approval]`)).toHaveLength(3);
    await page.locator('#approvals-heading').scrollIntoViewIfNeeded();
    await browser.screenshot(page, 'console-chairman-inbox');
  });

  it('approves a call after a confirmation: the gateway makes it once and the inbox shows its result', async () => {
    const before = postsReceived();
    await page.click(`${item(approve)} button[data-decide-approval="approve"]`);
    await page.waitForSelector('dialog[data-dialog="approval"]', { timeout: WAIT_MS });
    expect(describeViolations(await accessibilityViolations(page))).toEqual([]);
    await browser.screenshot(page, 'console-approve-confirmation');
    await page.fill('dialog[data-dialog="approval"] textarea[name="note"]', 'Customer asked for it');
    await page.click('dialog[data-dialog="approval"] button[type="submit"]');
    await page.waitForSelector(`${item(approve)}[data-status="approved"]`, { timeout: WAIT_MS });
    await waitForMatch(page, `${item(approve)} [data-field="call"]`, /HTTP 201/);
    expect(await page.getAttribute(`${item(approve)} [data-field="call"]`, 'data-outcome')).toBe('success');
    expect(await page.textContent(`${item(approve)}`)).toContain('Customer asked for it');
    await waitForText(page, '[data-approvals-waiting] .count', '2');
    expect(postsReceived()).toBe(before + 1);
    const row = await stored(approve);
    expect([row.status, row.decidedBy, row.note]).toEqual([
      'approved',
      chairman.sub,
      'Customer asked for it',
    ]);
    // The decision reaches the feed as an event.
    await page.waitForSelector('.feed li.approval', { timeout: WAIT_MS });
  });

  it('rejects one and requests changes to another: nothing is sent', async () => {
    const before = postsReceived();
    await decideFromInbox(page, reject, 'reject', 'Not this customer');
    await decideFromInbox(page, changes, 'request_changes', 'Use the company address');
    await page.waitForSelector(`${item(reject)}[data-status="rejected"]`, { timeout: WAIT_MS });
    await page.waitForSelector(`${item(changes)}[data-status="changes_requested"]`, { timeout: WAIT_MS });
    await waitForText(page, '[data-approvals-waiting] .count', '0');
    expect((await stored(reject)).status).toBe('rejected');
    expect((await stored(changes)).status).toBe('changes_requested');
    expect(postsReceived()).toBe(before);
    await page.selectOption('[data-filter="approval-status"]', '');
    await page.waitForSelector(`${item(changes)}`, { timeout: WAIT_MS });
    await page.locator('#approvals-heading').scrollIntoViewIfNeeded();
    await browser.screenshot(page, 'console-chairman-decided');
  });

  it('answers a request another approver decided first with that decision, and makes no second call', async () => {
    const id = await requestCall(shared, 'gus@example.com');
    await page.selectOption('[data-filter="approval-status"]', 'pending');
    await page.waitForSelector(`${item(id)}[data-status="pending"]`, { timeout: WAIT_MS });
    // The operator rejects it elsewhere while the chairman's confirmation is open.
    await page.click(`${item(id)} button[data-decide-approval="approve"]`);
    await page.waitForSelector('dialog[data-dialog="approval"]', { timeout: WAIT_MS });
    const rejected = await t.rest('POST', `/api/v1/forge/approvals/${id}/reject`, {
      caller: operator,
      body: {},
    });
    expect(rejected.status).toBe(200);
    const before = postsReceived();
    await page.click('dialog[data-dialog="approval"] button[type="submit"]');
    await page.waitForSelector(`${item(id)}[data-status="rejected"]`, { timeout: WAIT_MS });
    await waitForText(
      page,
      '[data-status-message]',
      `POST /customers: rejected (decided before by ${operator.sub}).`,
    );
    expect(postsReceived()).toBe(before);
    expect((await stored(id)).decidedBy).toBe(operator.sub);
  });

  it('decides by keyboard alone, and focus lands on the decided request', async () => {
    const id = await requestCall(shared, 'ivy@example.com');
    await page.selectOption('[data-filter="approval-status"]', 'pending');
    const approveButton = page.locator(`${item(id)} button[data-decide-approval="request_changes"]`);
    await approveButton.focus();
    await page.keyboard.press('Enter');
    await page.waitForSelector('dialog[data-dialog="approval"]', { timeout: WAIT_MS });
    expect(await page.evaluate(() => document.activeElement?.getAttribute('name'))).toBe('note');
    await page.keyboard.type('Send it to billing instead');
    await page.keyboard.press('Tab');
    await page.keyboard.press('Tab');
    expect(await page.evaluate(() => document.activeElement?.textContent)).toBe('Request changes');
    await page.keyboard.press('Enter');
    await page.waitForSelector(`${item(id)}[data-status="changes_requested"]`, { timeout: WAIT_MS });
    await page.waitForFunction(
      (target) => document.activeElement?.getAttribute('data-approval-id') === target,
      id,
      { timeout: WAIT_MS },
    );
    expect((await stored(id)).note).toBe('Send it to billing instead');
  });

  it('shows the conflict of a decision on an expired request, and sends nothing', async () => {
    const id = await requestCall(shared, 'hal@example.com');
    await t.db.prisma.connectorCallApproval.update({
      where: { id },
      data: { expiresAt: new Date(Date.now() - 1000) },
    });
    const before = postsReceived();
    const refused = await forcedRefusal(
      page,
      'approval',
      (target) => window.boardroomDashboard?.decideApproval(target, 'approve'),
      id,
    );
    expect(refused).toMatch(/expired at .*; its status is expired/);
    await page.click('dialog[data-dialog="approval"] button[type="button"]');
    expect((await stored(id)).decidedBy).toBeNull();
    expect(postsReceived()).toBe(before);
    await page.selectOption('[data-filter="approval-status"]', 'expired');
    await page.waitForSelector(`${item(id)}[data-status="expired"]`, { timeout: WAIT_MS });
    expect(await page.$$(`${item(id)} button`)).toEqual([]);
  });

  it('sets a role’s budget from its card after a confirmation', async () => {
    await page.click('[data-role="cto"] button[data-action="budget"]');
    const dialog = 'dialog[data-dialog="budget"]';
    await page.waitForSelector(dialog, { timeout: WAIT_MS });
    expect(describeViolations(await accessibilityViolations(page))).toEqual([]);
    await page.selectOption(`${dialog} select[name="period"]`, 'day');
    await page.fill(`${dialog} input[name="limit"]`, '1,250');
    await page.fill(`${dialog} input[name="estimate"]`, '2.5');
    await page.fill(`${dialog} input[name="warning"]`, '75');
    await browser.screenshot(page, 'console-budget-confirmation');
    await page.click(`${dialog} button[type="submit"]`);
    await waitForText(page, '[data-role="cto"] [data-budget] [data-field="budget"]', '$0.00 of $1,250.00');
    const budget = await t.db.prisma.budget.findFirstOrThrow({
      where: { tenantId: chairman.tenantId, role: 'cto' },
    });
    expect([
      budget.period,
      String(budget.limitUsd),
      String(budget.estimateUsd),
      String(budget.warningThreshold),
    ]).toEqual(['day', '1250', '2.5', '0.75']);
  });

  it('sets the company’s budget, over every role, from the summary', async () => {
    expect(await page.textContent('[data-company-budget]')).toContain(
      'The company has no budget over every role.',
    );
    await page.click('[data-company-budget] button[data-action="budget"]');
    const dialog = 'dialog[data-dialog="budget"]';
    await page.waitForSelector(dialog, { timeout: WAIT_MS });
    expect(await page.textContent(`${dialog} h2`)).toBe('Set the company’s budget?');
    await page.fill(`${dialog} input[name="limit"]`, '5000');
    await page.click(`${dialog} button[type="submit"]`);
    await waitForText(page, '[data-company-budget] [data-field="budget"]', '$0.00 of $5,000.00');
    expect(await page.textContent('[data-company-budget] .budget p')).toContain('Budget this month');
    const budget = await t.db.prisma.budget.findFirstOrThrow({
      where: { tenantId: chairman.tenantId, role: '*' },
    });
    expect([budget.period, String(budget.limitUsd)]).toEqual(['month', '5000']);
    await page.locator('.summary').scrollIntoViewIfNeeded();
    await browser.screenshot(page, 'console-company-budget');
  });

  it('keeps the dialog open with the server’s refusal of a bad budget, and changes nothing', async () => {
    await page.click('[data-role="cto"] button[data-action="budget"]');
    const dialog = 'dialog[data-dialog="budget"]';
    await page.waitForSelector(dialog, { timeout: WAIT_MS });
    expect(await page.inputValue(`${dialog} input[name="limit"]`)).toBe('1250');
    await page.fill(`${dialog} input[name="limit"]`, 'lots');
    await page.click(`${dialog} button[type="submit"]`);
    await waitForText(
      page,
      `${dialog} [role="alert"]`,
      'The limit should be an amount of US dollars, such as 250 or 12.50.',
    );
    await browser.screenshot(page, 'console-budget-refused');
    // Past the page's own check, the server's refusal shows in the dialog the same way.
    await page.fill(`${dialog} input[name="limit"]`, '2000000000');
    await page.click(`${dialog} button[type="submit"]`);
    await waitForMatch(page, `${dialog} [role="alert"]`, /limitUsd/);
    await page.click(`${dialog} button[type="button"]`);
    const budget = await t.db.prisma.budget.findFirstOrThrow({
      where: { tenantId: chairman.tenantId, role: 'cto' },
    });
    expect(String(budget.limitUsd)).toBe('1250');
  });

  it('finds no accessibility violation with the inbox and budgets on the page', async () => {
    expect(describeViolations(await accessibilityViolations(page))).toEqual([]);
    await page.close();
  });
});

describe('the console as an operator', () => {
  let page: Page;
  let mine: string;
  let theirs: string;

  it('offers decisions only where the policy names operators, and no pause, resume or budget', async () => {
    mine = await requestCall(shared, 'dee@example.com');
    theirs = await requestCall(chairmanOnly, 'eve@example.com');
    page = await openDashboard(browser, server.url, operator);
    await page.waitForSelector(`${item(mine)}[data-status="pending"]`, { timeout: WAIT_MS });
    await page.waitForSelector(`${item(theirs)}[data-status="pending"]`, { timeout: WAIT_MS });
    expect(await page.$$(`${item(mine)} button[data-decide-approval]`)).toHaveLength(3);
    expect(await page.$$(`${item(theirs)} button`)).toEqual([]);
    expect(await page.textContent(`${item(theirs)} [data-field="not-yours"]`)).toBe(
      'Only chairman may decide this request.',
    );
    expect(await page.$$('[data-role] button')).toEqual([]);
    expect(await page.$$('[data-company-budget] button')).toEqual([]);
    await waitForText(page, '[data-company-budget] [data-field="budget"]', '$0.00 of $5,000.00');
    await page.locator('#approvals-heading').scrollIntoViewIfNeeded();
    await browser.screenshot(page, 'console-operator-inbox');
  });

  it('approves a request the policy lets operators decide', async () => {
    const before = postsReceived();
    await decideFromInbox(page, mine, 'approve', '');
    await page.waitForSelector(`${item(mine)}[data-status="approved"]`, { timeout: WAIT_MS });
    expect(postsReceived()).toBe(before + 1);
    expect((await stored(mine)).decidedBy).toBe(operator.sub);
  });

  it('shows the server’s refusal of a decision or a budget forced through the page, and nothing changes', async () => {
    const before = postsReceived();
    const refused = await forcedRefusal(
      page,
      'approval',
      (id) => window.boardroomDashboard?.decideApproval(id, 'approve'),
      theirs,
    );
    expect(refused).toMatch(/.+/);
    await browser.screenshot(page, 'console-operator-refused');
    await page.click('dialog[data-dialog="approval"] button[type="button"]');
    expect((await stored(theirs)).status).toBe('pending');
    expect(postsReceived()).toBe(before);

    expect(
      await forcedRefusal(page, 'budget', (role) => window.boardroomDashboard?.setBudget(role), 'cmo'),
    ).toBe('Not allowed for your role');
    expect(await t.db.prisma.budget.count({ where: { tenantId: chairman.tenantId, role: 'cmo' } })).toBe(0);
    await page.close();
  });
});

describe('the console of another tenant', () => {
  it('shows none of this tenant’s requests, and its decision on one is refused as unknown', async () => {
    const id = await requestCall(shared, 'ida@example.com');
    const stranger = await t.caller(['chairman'], { sub: 'chair-elsewhere' });
    const page = await openDashboard(browser, server.url, stranger);
    await waitForText(page, '[data-approvals-waiting] .count', '0');
    expect(await page.$$('[data-approvals] [data-approval-id]')).toEqual([]);
    const refused = await forcedRefusal(
      page,
      'approval',
      (target) => window.boardroomDashboard?.decideApproval(target, 'approve'),
      id,
    );
    expect(refused).toMatch(/not found/i);
    expect((await stored(id)).status).toBe('pending');
    await page.close();
  });
});

describe('the console as a member', () => {
  it('reads only: no inbox, no approval events, no action control', async () => {
    const pending = await requestCall(shared, 'fay@example.com');
    const page = await openDashboard(browser, server.url, member);
    await page.waitForSelector('[data-role="cto"] [data-budget]', { timeout: WAIT_MS });
    expect(await page.$('[data-approvals]')).toBeNull();
    expect(await page.$('[data-approvals-waiting]')).toBeNull();
    expect(await page.$('.feed li.approval')).toBeNull();
    expect(await page.$$('[data-role] button')).toEqual([]);
    expect(await page.$$('[data-company-budget] button')).toEqual([]);
    await browser.screenshot(page, 'console-member');

    expect(
      await forcedRefusal(
        page,
        'approval',
        (id) => window.boardroomDashboard?.decideApproval(id, 'approve'),
        pending,
      ),
    ).toBe('Not allowed for your role');
    await page.click('dialog[data-dialog="approval"] button[type="button"]');
    expect(
      await forcedRefusal(page, 'budget', (role) => window.boardroomDashboard?.setBudget(role), 'cmo'),
    ).toBe('Not allowed for your role');
    expect((await stored(pending)).status).toBe('pending');
    expect(await t.db.prisma.budget.count({ where: { tenantId: chairman.tenantId, role: 'cmo' } })).toBe(0);
    expect(describeViolations(await accessibilityViolations(page))).toEqual([]);
    await page.close();
  });

  it('requested nothing from another host and broke no CSP rule', () => {
    expect(browser.foreignRequests(server.url)).toEqual([]);
    expect(browser.cspViolations()).toEqual([]);
  });
});
