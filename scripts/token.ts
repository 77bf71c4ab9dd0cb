// Prints a token signed with the configured secret:
//   npm run token -- --tenant <uuid> --sub <id> --roles chairman,operator [--ttl 1h]
//   npm run token -- --tenant <uuid> --sub <id> --roles agent --agent-roles cfo (an agent bound to its roles)
// Bad input prints the usage line and exits 2; it never shows a stack trace.
import { parseArgs } from 'node:util';
import { loadOrCreateDevSecret } from '../src/auth/dev-secret.js';
import { MAX_AGENT_ROLES, signToken } from '../src/auth/tokens.js';
import { ROLES } from '../src/auth/viewer.js';
import { ConfigError, loadConfig } from '../src/config.js';
import { AGENT_ROLE_PATTERN, normalizeRole } from '../src/domain/agents/roles.js';

const usage = `usage: npm run token -- --tenant <uuid> --sub <id> [--roles ${ROLES.join(',')}] [--agent-roles <role,...>] [--ttl 1h]`;
// The durations jose accepts for `exp`, restricted to the future: a number and a unit.
const TTL = /^\d+ ?(s|secs?|seconds?|m|mins?|minutes?|h|hrs?|hours?|d|days?|w|weeks?)$/i;

function refuse(problem: string): never {
  console.error(problem);
  console.error(usage);
  process.exit(2);
}

let values: {
  tenant?: string;
  sub?: string;
  roles: string;
  'agent-roles'?: string;
  ttl: string;
  help?: boolean;
};
try {
  ({ values } = parseArgs({
    options: {
      tenant: { type: 'string' },
      sub: { type: 'string' },
      roles: { type: 'string', default: 'member' },
      'agent-roles': { type: 'string' },
      ttl: { type: 'string', default: '1h' },
      help: { type: 'boolean', short: 'h' },
    },
  }));
} catch (error) {
  refuse((error as Error).message);
}
if (values.help) {
  console.log(usage);
  console.log('Roles: any of', ROLES.join(', '), '(comma-separated; default member). TTL: e.g. 30m, 1h, 7d.');
  console.log(
    'Agent roles: the agent roles an agent token works for (comma-separated, e.g. cfo); without it, every role.',
  );
  process.exit(0);
}
const roles = values.roles
  .split(',')
  .map((role) => role.trim())
  .filter(Boolean);
const unknown = roles.filter((role) => !(ROLES as readonly string[]).includes(role));
if (!values.tenant || !/^[0-9a-f]{8}(-[0-9a-f]{4}){3}-[0-9a-f]{12}$/i.test(values.tenant)) {
  refuse('--tenant must be a uuid');
}
if (!values.sub?.trim()) refuse('--sub is required');
if (roles.length === 0 || unknown.length > 0)
  refuse(`unknown roles: ${unknown.join(', ') || '(none given)'}`);
if (!TTL.test(values.ttl))
  refuse(`--ttl ${JSON.stringify(values.ttl)} is not a duration such as 30m, 1h or 7d`);
const agentRoles = values['agent-roles']?.split(',').map(normalizeRole).filter(Boolean);
if (agentRoles !== undefined) {
  const malformed = agentRoles.filter((role) => !AGENT_ROLE_PATTERN.test(role));
  if (agentRoles.length === 0 || agentRoles.length > MAX_AGENT_ROLES || malformed.length > 0) {
    refuse(
      `--agent-roles takes 1 to ${MAX_AGENT_ROLES} agent roles such as cfo,ceo${malformed.length > 0 ? `, not ${malformed.join(', ')}` : ''}`,
    );
  }
  if (!roles.includes('agent')) refuse('--agent-roles binds an agent token: add agent to --roles');
}

try {
  const config = loadConfig();
  if (config.auth.jwksUrl && !config.auth.jwtSecret) {
    console.error('AUTH_JWKS_URL is set: tokens come from your identity provider, not from this command.');
    process.exit(2);
  }
  const secret = config.auth.jwtSecret ?? (await loadOrCreateDevSecret(config.dataDir));
  console.log(
    await signToken(secret, {
      tenantId: values.tenant,
      sub: values.sub,
      roles,
      agentRoles,
      ttl: values.ttl,
      issuer: config.auth.issuer,
      audience: config.auth.audience,
    }),
  );
} catch (error) {
  console.error(error instanceof ConfigError ? error.message : `token: ${(error as Error).message}`);
  process.exit(error instanceof ConfigError ? 2 : 1);
}
