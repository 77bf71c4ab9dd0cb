import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { App } from './app.js';
import { signToken } from './auth/tokens.js';

/** A fixed demo tenant, so the printed token keeps working across restarts of a development instance. */
export const DEMO_TENANT_ID = '00000000-0000-4000-8000-00000000de30';

/** The project directory: this module runs as src/dev-welcome.ts (tsx) or inside dist/main.js. */
const projectDir = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

/** Quotes a value for a POSIX shell when it needs it. */
const shellWord = (value: string) =>
  /^[\w@%+=:,./-]+$/.test(value) ? value : `'${value.replace(/'/g, `'\\''`)}'`;

/**
 * The command that signs more tokens with this instance's secret, from any shell and directory: the
 * development secret lives under DATA_DIR, so the command names it (absolute), and the project by
 * `npm --prefix`; issuer and audience when configured, since the token must carry them.
 */
export function tokenCommand(app: App, args: string): string {
  const { dataDir, auth } = app.services.config;
  const env = [
    `DATA_DIR=${shellWord(path.resolve(dataDir))}`,
    ...(auth.issuer ? [`AUTH_ISSUER=${shellWord(auth.issuer)}`] : []),
    ...(auth.audience ? [`AUTH_AUDIENCE=${shellWord(auth.audience)}`] : []),
  ];
  return `${env.join(' ')} npm --prefix ${shellWord(projectDir)} run token -- ${args}`;
}

/** Development start without a configured secret: a demo tenant and a ready chairman token. */
export async function printDevelopmentWelcome(app: App, url: string): Promise<void> {
  const secret = app.services.config.auth.jwtSecret;
  if (!secret) return;
  await app.services.tenants.ensure(DEMO_TENANT_ID);
  const token = await signToken(secret, {
    tenantId: DEMO_TENANT_ID,
    sub: 'demo-chairman',
    roles: ['chairman', 'operator'],
    ttl: '12h',
    issuer: app.services.config.auth.issuer,
    audience: app.services.config.auth.audience,
  });
  console.log(`
Development mode: tokens are signed with a secret kept in ${path.resolve(app.services.config.dataDir, 'dev-jwt-secret')}.
Demo tenant ${DEMO_TENANT_ID}; chairman token (valid 12 h):

  export TOKEN=${token}

Start page: ${url}/   GraphiQL: ${url}/graphql   REST docs: ${url}/docs
Dashboard:  ${url}/dashboard#token=${token}
  curl -s ${url}/api/v1/agents/ceo/vitals -H "Authorization: Bearer $TOKEN"
More tokens, from any shell (the same DATA_DIR, hence the same secret):
  ${tokenCommand(app, `--tenant ${DEMO_TENANT_ID} --sub alice --roles operator`)}
`);
}
