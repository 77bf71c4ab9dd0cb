import { afterAll, describe, expect, it } from 'vitest';
import { routes } from '../../rest/routes.js';
import type { RunningServer } from '../../src/server.js';
import type { TestApp } from '../support/app.js';
import { serveTestApp } from '../support/fixtures.js';
import { type Browser, launchBrowser } from './support/browser.js';

let t: TestApp;
let server: RunningServer;
let browser: Browser;
let operations: { method: string; path: string; operationId: string }[];

serveTestApp(async (app) => {
  ({ t, server } = app);
  browser = await launchBrowser();
  const document = (await t.rest('GET', '/api/v1/openapi.json')).body as {
    paths: Record<string, Record<string, { operationId: string }>>;
  };
  operations = Object.entries(document.paths).flatMap(([path, methods]) =>
    Object.entries(methods).map(([method, { operationId }]) => ({ method, path, operationId })),
  );
});
afterAll(async () => {
  await browser?.close();
});

describe('/docs in Chromium', () => {
  it('renders every operation with its path and operationId, from this server only', async () => {
    const page = await browser.open(`${server.url}/docs`);
    await expect.poll(() => page.locator('.opblock').count(), { timeout: 20_000 }).toBe(operations.length);
    // Every route of rest/, not a count to keep up to date by hand.
    expect(operations.length).toBe(routes.length);
    const rendered = await page.locator('.opblock').evaluateAll((blocks) =>
      blocks.map((block) => ({
        method: block.querySelector('.opblock-summary-method')?.textContent?.toLowerCase(),
        path: block.querySelector('.opblock-summary-path')?.getAttribute('data-path'),
        operationId: block.querySelector('.opblock-summary-operation-id')?.textContent,
      })),
    );
    expect(rendered).toEqual(expect.arrayContaining(operations));
    for (const { operationId } of operations) {
      await expect.poll(() => page.getByText(operationId, { exact: true }).isVisible()).toBe(true);
    }
    await browser.screenshot(page, 'docs');
    expect(browser.foreignRequests(server.url)).toEqual([]);
  });

  it('shows an operation’s parameters, body example and error statuses when opened', async () => {
    const page = await browser.open(`${server.url}/docs#/connectors/updateConnector`);
    const operation = page.locator('#operations-connectors-updateConnector');
    await expect
      .poll(() => operation.locator('.responses-table').first().isVisible(), { timeout: 20_000 })
      .toBe(true);
    const text = (await operation.textContent()) ?? '';
    expect(text).toContain('If-Match');
    expect(text).toContain('https://api.stripe.com/v1');
    const statuses = await operation
      .locator('.responses-table tbody .response-col_status')
      .evaluateAll((cells) => cells.map((cell) => cell.textContent?.trim().slice(0, 3)));
    expect(statuses).toEqual([
      '200',
      '400',
      '401',
      '403',
      '404',
      '405',
      '409',
      '412',
      '413',
      '422',
      '429',
      '503',
    ]);
    // 400: an invalid Idempotency-Key (docs/idempotency.md).
    expect(text).toContain('Idempotency-Key');
    // Each error shows what the route answers (rest/examples.ts), not a stand-in.
    const stale = operation.locator('.responses-table tbody tr.response[data-code="412"]');
    expect(await stale.textContent()).toContain('is at version 3, not 2; read it again before editing');
    expect(text).not.toContain('"Not Found"');
    await stale.scrollIntoViewIfNeeded();
    await browser.screenshot(page, 'docs-operation');
    expect(browser.foreignRequests(server.url)).toEqual([]);
  });

  it('puts an opened operation’s deep link in the address bar, with no link inside its summary button', async () => {
    const page = await browser.open(`${server.url}/docs`);
    const summary = page.locator('#operations-agents-sendChatMessage .opblock-summary-control');
    await summary.waitFor({ timeout: 20_000 });
    expect(await page.locator('.opblock-summary-control a').count()).toBe(0);
    await summary.click();
    await expect.poll(() => new URL(page.url()).hash).toBe('#/agents/sendChatMessage');
    await page.close();
  });

  it('reported no Content-Security-Policy violation', () => {
    expect(browser.cspViolations()).toEqual([]);
  });
});
