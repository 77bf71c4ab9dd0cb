import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunningServer } from '../../src/server.js';
import { type Caller, createTestApp, type TestApp } from '../support/app.js';
import { listen } from '../support/ws.js';
import { type Browser, launchBrowser } from './support/browser.js';
import { nextListener } from './support/listeners.js';

let t: TestApp;
let server: RunningServer;
let browser: Browser;
let chairman: Caller;
let page: Page;

beforeAll(async () => {
  t = await createTestApp();
  chairman = await t.caller(['chairman'], { sub: 'chair-graphiql' });
  const live = await t.graphql(
    'mutation { setDogfoodLiveMode(enabled: true) { dogfoodLiveMode } }',
    {},
    chairman,
  );
  expect(live.errors).toBeUndefined();
  server = await listen(t);
  browser = await launchBrowser();
});
afterAll(async () => {
  await browser?.close();
  await server?.close();
  await t?.close();
});

/** Replaces the text of the visible Monaco editor in `container` as a paste (typing would auto-close brackets). */
async function fillEditor(container: string, text: string) {
  await page.locator(`${container} .monaco-editor .view-lines`).filter({ visible: true }).click();
  await page.keyboard.press('ControlOrMeta+A');
  await page.keyboard.press('Delete');
  await page.evaluate((pasted) => {
    const clipboardData = new DataTransfer();
    clipboardData.setData('text/plain', pasted);
    document.activeElement?.dispatchEvent(
      new ClipboardEvent('paste', { clipboardData, bubbles: true, cancelable: true }),
    );
  }, text);
}

/** What a pane shows, with Monaco's non-breaking spaces as spaces. */
const textOf = async (selector: string) =>
  ((await page.locator(selector).first().textContent()) ?? '').replace(/\u00a0/g, ' ');
const response = () => textOf('.graphiql-response');

function within<T>(promise: Promise<T>, ms: number, message: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_resolve, reject) => {
    timer = setTimeout(() => reject(new Error(message)), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

describe('GraphiQL in Chromium', () => {
  it('renders with the example tab', async () => {
    page = await browser.open(`${server.url}/graphql`);
    await expect.poll(() => textOf('.graphiql-query-editor'), { timeout: 20_000 }).toContain('query Me {');
    expect(await textOf('.graphiql-query-editor')).toContain('npm run token -- --tenant <uuid>');
    await browser.screenshot(page, 'graphiql-loaded');
  });

  it('runs a query with the Authorization header from the Headers tab', async () => {
    await page.getByRole('button', { name: 'Headers' }).click();
    await fillEditor('.graphiql-editor-tool', JSON.stringify({ Authorization: `Bearer ${chairman.token}` }));
    await page.getByRole('button', { name: /Execute query/ }).click();
    await expect.poll(() => response(), { timeout: 10_000 }).toContain(chairman.tenantId);
    expect(await response()).toContain('chair-graphiql');
    await browser.screenshot(page, 'graphiql-query');
  });

  it('runs a subscription with the same header and shows the event', async () => {
    await fillEditor(
      '.graphiql-query-editor',
      'subscription WatchPauses {\n  agentPaused {\n    eventId\n    role\n    actorUserId\n    pausedAt\n  }\n}',
    );
    // GraphiQL names the tab after the operation once it has parsed the new text; running before that
    // would run the previous operation.
    await expect.poll(() => textOf('.graphiql-tab-active')).toContain('WatchPauses');
    const listening = nextListener(t.app.services.bus, 'DOGFOOD_AGENT_PAUSED');
    await page.getByRole('button', { name: /Execute/ }).click();
    await within(listening, 10_000, 'the subscription did not reach the server');
    const paused = await t.rest('POST', '/api/v1/dogfood/agents/cfo/pause', {
      caller: chairman,
      body: { actor_user_id: 'chair-graphiql', reason: 'seen in GraphiQL' },
    });
    expect(paused.status).toBe(200);
    await expect.poll(() => response(), { timeout: 10_000 }).toContain(paused.body.event_id);
    const text = (await response()) ?? '';
    expect(text).toContain('cfo');
    expect(text).not.toContain('seen in GraphiQL');
    await browser.screenshot(page, 'graphiql-subscription');
  });

  it('requested nothing from another host', () => {
    expect(browser.requests().length).toBeGreaterThan(1);
    expect(browser.foreignRequests(server.url)).toEqual([]);
  });

  it('reported no Content-Security-Policy violation', () => {
    expect(browser.cspViolations()).toEqual([]);
  });
});
