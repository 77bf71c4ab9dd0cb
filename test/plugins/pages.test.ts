import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../support/app.js';

/** `<script src>`, `<link href>` and `<img src>` attributes that point at another host. */
const externalReferences = (html: string) =>
  [
    ...html.matchAll(/<(?:script|link|img)\b[^>]*\b(?:src|href)\s*=\s*["']?((?:https?:)?\/\/[^"'\s>]+)/gi),
  ].map((match) => match[1]);

async function page(t: TestApp, path: string, accept = 'text/html') {
  const response = await t.app.yoga.fetch(`http://yoga${path}`, { headers: { accept } });
  return { status: response.status, headers: response.headers, text: await response.text() };
}

describe('pages in development', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp();
  });
  afterAll(() => t.close());

  it('serves a landing page at / linking every page and saying how to get a token', async () => {
    const { status, headers, text } = await page(t, '/');
    expect(status).toBe(200);
    expect(headers.get('content-type')).toBe('text/html; charset=utf-8');
    for (const href of ['/graphql', '/docs', '/api/v1/openapi.json', '/dashboard', '/readyz']) {
      expect(text).toContain(`href="${href}"`);
    }
    expect(text).toContain(
      'npm run token -- --tenant &lt;tenant uuid&gt; --sub &lt;your id&gt; --roles chairman',
    );
    expect(text).toContain('<code>npm start</code> prints a ready chairman token');
    expect(text).not.toMatch(/<script/i);
    expect(externalReferences(text)).toEqual([]);
  });

  it('serves GraphiQL from its own bundle, with subscriptions over SSE and an example tab', async () => {
    const { status, text } = await page(t, '/graphql');
    expect(status).toBe(200);
    expect(text).toContain('YogaGraphiQL.renderYogaGraphiQL');
    expect(text).not.toMatch(/unpkg\.com|cdn\.jsdelivr\.net|esm\.sh/);
    expect(externalReferences(text)).toEqual([]);
    expect(text).toContain('"subscriptionsProtocol":"SSE"');
    expect(text).toContain('query Me {');
  });

  it('serves /docs with Swagger UI from this server', async () => {
    const { status, text } = await page(t, '/docs');
    expect(status).toBe(200);
    expect(externalReferences(text)).toEqual([]);
    const assets = [...text.matchAll(/(?:src|href)="(\/docs\/assets\/[^"]+)"/g)].map(
      (match) => match[1] as string,
    );
    expect(assets.map((asset) => asset.split('/').pop())).toEqual([
      'favicon-32x32.png',
      'swagger-ui.css',
      'swagger-ui-bundle.js',
    ]);
    expect(text).toContain('validatorUrl: null');
    for (const asset of assets) {
      const response = await t.app.yoga.fetch(`http://yoga${asset}`);
      expect(response.status, asset).toBe(200);
      expect(response.headers.get('cache-control')).toBe('public, max-age=31536000, immutable');
      expect((await response.arrayBuffer()).byteLength).toBeGreaterThan(500);
    }
    const script = assets.find((asset) => asset.endsWith('.js')) as string;
    const js = await t.app.yoga.fetch(`http://yoga${script}`);
    expect(js.headers.get('content-type')).toBe('text/javascript; charset=utf-8');
  });

  it('answers 404 for any other file under /docs/assets', async () => {
    const { text } = await page(t, '/docs');
    const css = /href="(\/docs\/assets\/[^"]+\/)swagger-ui\.css"/.exec(text)?.[1] as string;
    for (const name of ['package.json', 'index.html', '..%2Fpackage.json', '%2e%2e/%2e%2e/package.json']) {
      const response = await t.app.yoga.fetch(`http://yoga${css}${name}`);
      expect(response.status, name).toBe(404);
    }
  });
});

describe('pages in production', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp({ env: { NODE_ENV: 'production' } });
  });
  afterAll(() => t.close());

  it('says on the landing page that GraphiQL is off and does not serve it', async () => {
    const landing = await page(t, '/');
    expect(landing.text).not.toContain('href="/graphql"');
    expect(landing.text).toContain('Switched off in production');
    const graphiql = await page(t, '/graphql');
    expect(graphiql.text).not.toContain('YogaGraphiQL');
  });

  it('still serves the REST reference', async () => {
    expect((await page(t, '/docs')).status).toBe(200);
  });
});
