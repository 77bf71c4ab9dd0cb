import type { App } from './app.js';
import { signToken } from './auth/tokens.js';

/** A fixed demo tenant, so the printed token keeps working across restarts of a development instance. */
export const DEMO_TENANT_ID = '00000000-0000-4000-8000-00000000de30';

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
Development mode: tokens are signed with a secret kept in ${app.services.config.dataDir}/dev-jwt-secret.
Demo tenant ${DEMO_TENANT_ID}; chairman token (valid 12 h):

  export TOKEN=${token}

Start page: ${url}/   GraphiQL: ${url}/graphql   REST docs: ${url}/docs
Dashboard:  ${url}/dashboard#token=${token}
  curl -s ${url}/api/v1/agents/ceo/vitals -H "Authorization: Bearer $TOKEN"
More tokens: npm run token -- --tenant ${DEMO_TENANT_ID} --sub alice --roles operator
`);
}
