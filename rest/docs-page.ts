import { docsAssetUrl } from '../src/pages/docs-assets.js';
import { page } from '../src/pages/security.js';

type OpenApi = ReturnType<typeof import('./openapi.js').buildOpenApiDocument>;

const escapeHtml = (text: string) => text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

/** JSON that is safe inside a <script> element. */
const scriptJson = (value: unknown) => JSON.stringify(value).replace(/</g, '\\u003c');

/** Without JavaScript: the list of routes, and where the document is. */
function plainIndex(document: OpenApi): string {
  const items = Object.entries(document.paths).flatMap(([path, methods]) =>
    Object.entries(methods).map(([method, raw]) => {
      const operation = raw as { summary: string; operationId: string };
      return `<li><code>${method.toUpperCase()} ${escapeHtml(path)}</code> (<code>${escapeHtml(operation.operationId)}</code>): ${escapeHtml(operation.summary)}</li>`;
    }),
  );
  return `<noscript><h1>${escapeHtml(document.info.title)}</h1><p>The interactive reference needs JavaScript. The OpenAPI 3.1 document: <a href="/api/v1/openapi.json">/api/v1/openapi.json</a>.</p><ul>${items.join('')}</ul></noscript>`;
}

/**
 * Swagger UI's own colours fall short of WCAG 2.2 AA (white on #49cc90 is 2:1, a parameter's grey
 * "(path)" 3.9:1): darker method colours, version stamps, Authorize button and parameter locations.
 */
const DOCS_STYLE = [
  'body{margin:0}',
  '.swagger-ui .topbar{display:none}',
  '.swagger-ui .opblock.opblock-get .opblock-summary-method{background:#1f5fa8}',
  '.swagger-ui .opblock.opblock-post .opblock-summary-method{background:#1b7f46}',
  '.swagger-ui .opblock.opblock-put .opblock-summary-method{background:#9a4a00}',
  '.swagger-ui .opblock.opblock-delete .opblock-summary-method{background:#b42318}',
  '.swagger-ui .opblock.opblock-patch .opblock-summary-method{background:#0b6b5c}',
  '.swagger-ui .info .title small{background:#4f5666}',
  '.swagger-ui .info .title small.version-stamp{background:#3f6b00}',
  '.swagger-ui .btn.authorize{color:#1b7f46;border-color:#1b7f46}',
  '.swagger-ui .btn.authorize span{color:#1b7f46}',
  '.swagger-ui .btn.authorize svg{fill:#1b7f46}',
  '.swagger-ui .parameter__in{color:#4f5666}',
  // An example shown whole and wrapped: a scrolling box would have to take the keyboard's focus.
  '.swagger-ui .highlight-code>.microlight{max-height:none;overflow:visible;white-space:pre-wrap;overflow-wrap:anywhere}',
  '.swagger-ui .visually-hidden{position:absolute;width:1px;height:1px;overflow:hidden;clip:rect(0 0 0 0);white-space:nowrap}',
].join('');

/**
 * Two changes to Swagger UI's markup, through its plugin API, that axe finds otherwise (WCAG 2.2 AA): each
 * operation's summary is a <button> that held the operation's deep link (<a>) in it (nested interactive
 * controls), so deep links render as plain text: opening an operation still puts its link in the address
 * bar and a link still opens it, since deep linking works through the expand action, not the anchor; and
 * the servers and examples <select>s had no label: the servers one gets one for assistive technology (its
 * visible title stays), and each examples one is wrapped in a <label> that names it.
 */
const ACCESSIBLE_MARKUP = `function AccessibleMarkup(system) {
  var h = system.React.createElement;
  return {
    components: {
      DeepLink: function (props) { return h('span', null, props.text); },
    },
    wrapComponents: {
      Servers: function (Original) {
        return function (props) {
          return h(system.React.Fragment, null, h('label', { htmlFor: 'servers', className: 'visually-hidden' }, 'Server'), h(Original, props));
        };
      },
      ExamplesSelect: function (Original) {
        return function (props) {
          return h('label', null, h('span', { className: 'visually-hidden' }, 'Example'), h(Original, props));
        };
      },
    },
  };
}`;

/**
 * `/docs`: Swagger UI over the OpenAPI document, with its script and styles served by this gateway from
 * swagger-ui-dist (nothing is fetched from another host: the validator badge, which calls
 * validator.swagger.io, is switched off).
 */
export function renderDocsPage(document: OpenApi): string {
  return page(
    '/docs',
    `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeHtml(document.info.title)}</title>
<link rel="icon" type="image/png" href="${docsAssetUrl('favicon-32x32.png')}">
<link rel="stylesheet" href="${docsAssetUrl('swagger-ui.css')}">
<style>${DOCS_STYLE}</style>
</head>
<body>
${plainIndex(document)}
<div id="reference"></div>
<script src="${docsAssetUrl('swagger-ui-bundle.js')}"></script>
<script id="openapi" type="application/json">${scriptJson(document)}</script>
<script>
${ACCESSIBLE_MARKUP}
window.ui = SwaggerUIBundle({
  spec: JSON.parse(document.getElementById('openapi').textContent),
  dom_id: '#reference',
  validatorUrl: null,
  deepLinking: true,
  displayOperationId: true,
  docExpansion: 'list',
  defaultModelsExpandDepth: 0,
  defaultModelExpandDepth: 3,
  persistAuthorization: false,
  tryItOutEnabled: false,
  // Its colour themes put examples in colours of 3:1 and less on their backgrounds: plain text instead.
  syntaxHighlight: { activated: false },
  plugins: [AccessibleMarkup],
});
</script>
</body>
</html>
`,
  );
}
