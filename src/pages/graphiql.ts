import type { GraphiQLOptions } from 'graphql-yoga';
import { page } from './security.js';

const welcome = `# Boardroom GraphQL explorer
#
# 1. Get a token: \`npm start\` prints one in
#    development, or sign one with
#      npm run token -- --tenant <uuid> \\
#        --sub <your id> --roles chairman
# 2. In the Headers tab below, enter
#      {"Authorization": "Bearer <token>"}
# 3. Run this query (Ctrl+Enter).
#
# Subscriptions use the same header (this page
# sends them as server-sent events). Uncomment
# the one below, run it, then pause an agent:
#   POST /api/v1/dogfood/agents/cfo/pause
# (the tenant must be in dogfood live mode).
#
# subscription WatchPauses {
#   agentPaused {
#     eventId
#     role
#     actorUserId
#     pausedAt
#   }
# }

query Me {
  me {
    sub
    tenantId
    roles
  }
}
`;

/**
 * GraphiQL as yoga serves it outside production. Subscriptions go over SSE, a plain HTTP request that
 * carries the Headers tab (a browser WebSocket cannot send an Authorization header, and GraphiQL's
 * graphql-ws client would send an empty connection_init). Programmatic clients keep graphql-ws.
 */
export const graphiqlOptions: GraphiQLOptions = {
  title: 'Boardroom GraphiQL',
  subscriptionsProtocol: 'SSE',
  // No placeholder header: an invalid token would make the schema request fail before one is pasted.
  defaultTabs: [{ query: welcome }],
  defaultEditorToolsVisibility: 'headers',
};

let cached: { key: string; html: string } | undefined;

/** GraphiQL's grey logo text is 4.26:1 against its background; WCAG 2.2 AA asks 4.5:1. */
const CONTRAST_FIX = '<style>.graphiql-logo span{color:#4f5666}</style>';

/**
 * The GraphiQL page with every script, style and worker inlined from `@graphql-yoga/render-graphiql`
 * (yoga's default page loads them from a CDN). Loaded on first use: the bundle is large and production
 * never serves it.
 */
export async function renderGraphiQL(options: GraphiQLOptions): Promise<string> {
  const key = JSON.stringify(options);
  if (cached?.key !== key) {
    const { renderGraphiQL: render } = await import('@graphql-yoga/render-graphiql');
    cached = { key, html: page('/graphql', render(options).replace('</head>', `${CONTRAST_FIX}</head>`)) };
  }
  return cached.html;
}
