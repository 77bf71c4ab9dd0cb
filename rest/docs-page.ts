type OpenApi = ReturnType<typeof import('./openapi.js').buildOpenApiDocument>;

const escapeHtml = (text: string) => text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

/** A self-contained HTML reference of the REST routes (no external assets: it works offline). */
export function renderDocsPage(document: OpenApi): string {
  const sections = Object.entries(document.paths).flatMap(([path, methods]) =>
    Object.entries(methods).map(([method, raw]) => {
      const operation = raw as {
        summary: string;
        description?: string;
        requestBody?: unknown;
        parameters?: unknown[];
        responses: Record<string, unknown>;
      };
      const body = operation.requestBody
        ? `<h4>Request body</h4><pre>${escapeHtml(JSON.stringify(operation.requestBody, null, 2))}</pre>`
        : '';
      const params = operation.parameters
        ? `<h4>Parameters</h4><pre>${escapeHtml(JSON.stringify(operation.parameters, null, 2))}</pre>`
        : '';
      const statuses = Object.keys(operation.responses).join(', ');
      return `<section><h3><code>${method.toUpperCase()} ${escapeHtml(path)}</code></h3><p>${escapeHtml(operation.summary)}</p>${
        operation.description ? `<p>${escapeHtml(operation.description)}</p>` : ''
      }${params}${body}<p>Statuses: ${statuses}</p></section>`;
    }),
  );
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Boardroom API</title>
<style>body{font:15px/1.5 system-ui,sans-serif;max-width:60rem;margin:2rem auto;padding:0 1rem}pre{background:#f4f4f4;padding:.75rem;overflow:auto}section{border-top:1px solid #ddd;padding-top:.5rem}</style>
</head><body><h1>${escapeHtml(document.info.title)}</h1><p>${escapeHtml(document.info.description)}</p>
<p>Send <code>Authorization: Bearer &lt;JWT&gt;</code>. Errors are <code>{"detail": ...}</code>; 422 bodies list
<code>{type, loc, msg, input, ctx}</code> items. Machine-readable: <a href="/api/v1/openapi.json">/api/v1/openapi.json</a>.
GraphQL (and GraphiQL): <a href="/graphql">/graphql</a>.</p>${sections.join('\n')}</body></html>`;
}
