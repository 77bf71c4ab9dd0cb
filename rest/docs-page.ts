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
 * Swagger UI's own colours and link heights fall short of WCAG 2.2 AA (white on #49cc90 is 2:1; the
 * operation links are 19 px tall): darker method colours, version stamps and Authorize button, and links at
 * least 24 px tall.
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
  '.swagger-ui .opblock .opblock-summary-path a,.swagger-ui .opblock .opblock-summary-path__deprecated a{display:inline-block;min-height:24px;line-height:24px}',
].join('');

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
});
</script>
</body>
</html>
`,
  );
}
