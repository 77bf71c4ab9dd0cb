export interface LandingPageOptions {
  /** Whether GraphiQL is served at /graphql (it is off in production). */
  graphiql: boolean;
}

const style = `
body{font:16px/1.55 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;color:#1d2330;background:#f7f8fa;margin:0}
main{max-width:46rem;margin:0 auto;padding:2.5rem 1.25rem}
h1{font-size:1.9rem;margin:0 0 .25rem}h2{font-size:1.15rem;margin:2rem 0 .5rem}
p.lead{color:#4a5262;margin-top:0}
ul.pages{list-style:none;padding:0;display:grid;gap:.75rem}
ul.pages li{background:#fff;border:1px solid #dde1e8;border-radius:8px;padding:.8rem 1rem}
ul.pages a{font-weight:600;color:#1b5fd9;text-decoration:none}ul.pages a:hover{text-decoration:underline}
ul.pages span{display:block;color:#4a5262;font-size:.93rem}
code,pre{font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;font-size:.9rem}
pre{background:#1d2330;color:#eef1f6;padding:.8rem 1rem;border-radius:8px;overflow:auto}
.off{color:#8a5a00}
`;

/** `/`: what this server offers and how to get in, as plain HTML (no script, nothing from other hosts). */
export function renderLandingPage({ graphiql }: LandingPageOptions): string {
  const graphiqlItem = graphiql
    ? `<li><a href="/graphql">GraphiQL</a> <code>/graphql</code><span>Explore the GraphQL schema and run queries, mutations and subscriptions. Put your token in the Headers tab: <code>{"Authorization": "Bearer &lt;token&gt;"}</code>; subscriptions use it too.</span></li>`
    : `<li><strong>GraphiQL</strong> <code>/graphql</code><span class="off">Switched off in production (as is introspection). The GraphQL endpoint itself answers at <code>/graphql</code>.</span></li>`;
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Boardroom</title>
<link rel="icon" href="data:,">
<style>${style}</style>
</head>
<body>
<main>
<h1>Boardroom</h1>
<p class="lead">The control plane for companies run with AI agents: a multi-tenant GraphQL gateway with a REST compatibility API.</p>
<h2>Pages</h2>
<ul class="pages">
${graphiqlItem}
<li><a href="/docs">REST API reference</a> <code>/docs</code><span>Every <code>/api/v1</code> route with its request and response schemas, examples and error statuses. Machine-readable: <a href="/api/v1/openapi.json">/api/v1/openapi.json</a> (OpenAPI 3.1).</span></li>
<li><a href="/dashboard">Live dashboard</a> <code>/dashboard</code><span>The C-suite agents, their vital signs, task queue and events, updated live.</span></li>
<li><a href="/readyz">Readiness</a> <code>/readyz</code><span>200 when the database answers and migrations are applied; <a href="/healthz">/healthz</a> answers while the process lives.</span></li>
</ul>
<h2>Plugging in agents</h2>
<ul class="pages">
<li><strong>MCP endpoint</strong> <code>POST /mcp</code><span>A Model Context Protocol server (Streamable HTTP) for Claude Code, Codex, Cursor or any MCP client, with the same bearer tokens: the task tools of an agent role and every connector endpoint of the tenant as a tool. For example: <code>claude mcp add --transport http boardroom http://&lt;this host&gt;/mcp --header "Authorization: Bearer &lt;token&gt;"</code>. Client configurations: <code>README.md</code>, section “Pointing an MCP client at Boardroom”.</span></li>
<li><strong>Reference agent runtime</strong> <code>npm run agent -- --role cfo</code><span>Works an agent role's queue with any OpenAI-compatible model endpoint (OpenAI, vLLM, llama.cpp, Ollama): claims tasks over MCP, lets the model call the connector tools, and completes each task with its answer, recommendations, tokens and cost. Settings and examples: <code>README.md</code>, section “Running the reference agent runtime”.</span></li>
</ul>
<h2>Getting a token in development</h2>
<p>Every API call sends <code>Authorization: Bearer &lt;JWT&gt;</code>. In development, <code>npm start</code> prints a ready chairman token for a demo tenant. To sign one for any tenant, user and roles:</p>
<pre>npm run token -- --tenant &lt;tenant uuid&gt; --sub &lt;your id&gt; --roles chairman</pre>
<p>Roles are <code>chairman</code>, <code>operator</code>, <code>member</code> and <code>agent</code> (comma-separated). In production, tokens come from your identity provider.</p>
</main>
</body>
</html>
`;
}
