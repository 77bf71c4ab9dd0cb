import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { pageSecurityHeaders } from '../../src/pages/security.js';
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

  it('tells on the landing page how agents plug in: the MCP endpoint and the reference runtime', async () => {
    const { text } = await page(t, '/');
    expect(text).toContain('<code>POST /mcp</code>');
    expect(text).toContain('claude mcp add --transport http boardroom http://&lt;this host&gt;/mcp');
    expect(text).toContain('<code>npm run agent -- --role cfo</code>');
    expect(text).toContain('section “Pointing an MCP client at Boardroom”');
    expect(text).toContain('section “Running the reference agent runtime”');
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

/** What every HTML page must carry, whatever else its policy allows. */
function expectProtected(headers: Headers, path: string) {
  const policy = headers.get('content-security-policy') ?? '';
  expect(policy, path).toMatch(/^default-src 'none'; /);
  expect(policy, path).toContain("frame-ancestors 'none'");
  expect(policy, path).toContain("base-uri 'none'");
  expect(policy, path).toContain("form-action 'none'");
  expect(policy, path).not.toMatch(/https?:|\*/);
  expect(headers.get('x-frame-options'), path).toBe('DENY');
  expect(headers.get('x-content-type-options'), path).toBe('nosniff');
  expect(headers.get('referrer-policy'), path).toBe('no-referrer');
}

/** The directive `name` of a policy, as its list of sources. */
const directive = (policy: string | null, name: string) =>
  (policy ?? '')
    .split(';')
    .map((part) => part.trim().split(/\s+/))
    .find(([first]) => first === name)
    ?.slice(1) ?? [];

describe('browser protections in development', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp();
  });
  afterAll(() => t.close());

  it.each(['/', '/docs', '/graphql', '/dashboard', '/dashboard/'])(
    'protect the HTML page %s',
    async (path) => {
      const { status, headers } = await page(t, path);
      expect(status, path).toBe(200);
      expect(headers.get('content-type')).toMatch(/^text\/html/);
      expectProtected(headers, path);
    },
  );

  it('let the landing page run no script, and only its own inline style sheet', async () => {
    const { headers, text } = await page(t, '/');
    const policy = headers.get('content-security-policy');
    expect(directive(policy, 'script-src')).toEqual([]);
    const style = /<style>([\s\S]*?)<\/style>/.exec(text)?.[1] as string;
    const hash = createHash('sha256').update(style).digest('base64');
    expect(directive(policy, 'style-src')).toEqual([`'sha256-${hash}'`]);
  });

  it('let /docs run Swagger UI from this server and its one inline script, by hash', async () => {
    const { headers } = await page(t, '/docs');
    const scripts = directive(headers.get('content-security-policy'), 'script-src');
    expect(scripts[0]).toBe("'self'");
    expect(scripts.slice(1)).toEqual([expect.stringMatching(/^'sha256-[A-Za-z0-9+/]+=*'$/)]);
    expect(scripts).not.toContain("'unsafe-inline'");
  });

  it('let GraphiQL run only its inline scripts, by hash, and workers from blob: URLs', async () => {
    const { headers } = await page(t, '/graphql');
    const policy = headers.get('content-security-policy');
    const scripts = directive(policy, 'script-src');
    expect(scripts.length).toBeGreaterThan(0);
    for (const source of scripts) expect(source).toMatch(/^'sha256-/);
    expect(directive(policy, 'worker-src')).toEqual(['blob:']);
    expect(directive(policy, 'connect-src')).toEqual(["'self'"]);
  });

  it('give an HTML page without a policy of its own nothing beyond the rules every page has', () => {
    expect(pageSecurityHeaders('/not-a-page')['content-security-policy']).toBe(
      "default-src 'none'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
    );
  });

  it.each(['/healthz', '/api/v1/openapi.json', '/metrics', '/nothing-here'])(
    'send nosniff on every other response too: %s',
    async (path) => {
      const response = await t.app.yoga.fetch(`http://yoga${path}`);
      await response.arrayBuffer();
      expect(response.headers.get('x-content-type-options')).toBe('nosniff');
    },
  );

  it('send nosniff on a GraphQL answer and on the REST reference’s assets', async () => {
    const response = await t.app.yoga.fetch('http://yoga/graphql', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ query: '{ __typename }' }),
    });
    expect(response.headers.get('x-content-type-options')).toBe('nosniff');
    const { text } = await page(t, '/docs');
    const asset = /src="(\/docs\/assets\/[^"]+)"/.exec(text)?.[1] as string;
    expect((await t.app.yoga.fetch(`http://yoga${asset}`)).headers.get('x-content-type-options')).toBe(
      'nosniff',
    );
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

  it.each(['/', '/docs', '/dashboard'])('protects the HTML page %s', async (path) => {
    const { headers } = await page(t, path);
    expect(headers.get('content-type')).toMatch(/^text\/html/);
    expectProtected(headers, path);
  });
});
