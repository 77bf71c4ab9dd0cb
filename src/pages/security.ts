import { createHash } from 'node:crypto';

type Directive = 'script-src' | 'style-src' | 'img-src' | 'font-src' | 'connect-src' | 'worker-src';
type Sources = Partial<Record<Directive, readonly string[]>>;

const dashboard: Sources = {
  'script-src': ["'self'"],
  'style-src': ["'self'"],
  'img-src': ["'self'", 'data:'],
  // GraphQL over HTTP and graphql-ws: 'self' covers ws: and wss: to this host.
  'connect-src': ["'self'"],
};

/**
 * What each page may load besides its own inline scripts and style sheets (those are allowed by their
 * hashes, taken from the page's HTML by `page()`). Every page may load nothing from another host, never be
 * framed, and never submit a form or change its base URL. A path not listed gets none of these.
 */
const PAGES: Record<string, Sources> = {
  // The landing page: plain HTML with one inline style sheet and a `data:` icon; no script.
  '/': { 'img-src': ['data:'] },
  // Swagger UI: its bundle, style sheet and icon from /docs/assets; icons inlined as `data:` in its CSS.
  '/docs': { 'script-src': ["'self'"], 'style-src': ["'self'"], 'img-src': ["'self'", 'data:'] },
  // GraphiQL (development only): one HTML page with its whole bundle inline. Monaco's editor adds style
  // elements and style attributes as it runs (hence 'unsafe-inline', which CSP ignores beside hashes, so
  // the page's style sheets are not hashed), runs its language workers from `blob:` URLs and its icons
  // font from `data:`; queries and SSE subscriptions go to this origin.
  '/graphql': {
    'style-src': ["'unsafe-inline'"],
    'img-src': ['data:'],
    'font-src': ['data:'],
    'connect-src': ["'self'"],
    'worker-src': ['blob:'],
  },
  '/dashboard': dashboard,
};

const FIXED = "base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

/** Hashes of the inline scripts and style sheets each page was rendered with, by path. */
const inlineHashes = new Map<string, { scripts: Set<string>; styles: Set<string> }>();
const policies = new Map<string, string>();

/** `/dashboard/` is `/dashboard`. */
const pathOf = (path: string) => (path.length > 1 ? path.replace(/\/+$/, '') : path);

const sha256 = (text: string) => `'sha256-${createHash('sha256').update(text, 'utf8').digest('base64')}'`;

/** Scripts a browser runs: no `src`, and no type or a JavaScript type (not JSON data blocks). */
const INLINE_SCRIPT = /<script\b([^>]*)>([\s\S]*?)<\/script\s*>/gi;
const INLINE_STYLE = /<style\b[^>]*>([\s\S]*?)<\/style\s*>/gi;
const executable = (attributes: string) =>
  !/\bsrc\s*=/i.test(attributes) &&
  !/\btype\s*=\s*["']?(?!(?:text|application)\/javascript|module)[^"'\s>]/i.test(attributes);

function policyOf(path: string): string {
  const sources = PAGES[path];
  if (!sources) return `default-src 'none'; ${FIXED}`;
  const hashes = inlineHashes.get(path);
  const directive = (name: Directive, inline?: Set<string>) => {
    const allowed = [...(sources[name] ?? []), ...(inline ?? [])];
    return allowed.length > 0 ? `${name} ${allowed.join(' ')}; ` : '';
  };
  const styleHashes = sources['style-src']?.includes("'unsafe-inline'") ? undefined : hashes?.styles;
  return (
    `default-src 'none'; ${directive('script-src', hashes?.scripts)}${directive('style-src', styleHashes)}` +
    `${directive('img-src')}${directive('font-src')}${directive('connect-src')}${directive('worker-src')}` +
    FIXED
  );
}

/**
 * Records the inline scripts and style sheets of an HTML page served at `path` (by their hashes, for its
 * Content-Security-Policy) and returns the HTML as it is. Every renderer of a page passes its HTML through
 * here once; a page whose inline code changes is allowed exactly what it now contains.
 */
export function page(at: string, html: string): string {
  const path = pathOf(at);
  let hashes = inlineHashes.get(path);
  if (!hashes) {
    hashes = { scripts: new Set(), styles: new Set() };
    inlineHashes.set(path, hashes);
  }
  for (const [, attributes = '', code = ''] of html.matchAll(INLINE_SCRIPT)) {
    if (executable(attributes)) hashes.scripts.add(sha256(code));
  }
  for (const [, css = ''] of html.matchAll(INLINE_STYLE)) hashes.styles.add(sha256(css));
  policies.delete(path);
  return html;
}

/** The headers of an HTML page at `path`: its Content-Security-Policy and the framing and referrer rules. */
export function pageSecurityHeaders(at: string): Record<string, string> {
  const path = pathOf(at);
  let policy = policies.get(path);
  if (!policy) {
    policy = policyOf(path);
    policies.set(path, policy);
  }
  return {
    'content-security-policy': policy,
    'x-frame-options': 'DENY',
    'referrer-policy': 'no-referrer',
  };
}
