import { spawnSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { TEST_SECRET } from '../support/app.js';
import { built } from '../support/built.js';
import { databaseKind } from '../support/database.js';

const usage =
  /^usage: npm run token -- --tenant <uuid> --sub <id> \[--roles [a-z,]+\] \[--agent-roles <role,...>\] \[--ttl 1h\]$/m;
const tenant = '00000000-0000-4000-8000-00000000de30';

/** Runs dist/token.js as `npm run token -- …` does. */
function token(...args: string[]) {
  const result = spawnSync(process.execPath, [built.token, ...args], {
    env: { ...process.env, AUTH_JWT_SECRET: TEST_SECRET, AUTH_JWKS_URL: '' },
    encoding: 'utf8',
  });
  return { code: result.status, stdout: result.stdout, stderr: result.stderr };
}

// A command-line tool with no database: one project is enough.
describe.runIf(databaseKind === 'pglite')('npm run token', () => {
  it('prints the usage line for --help and exits 0', () => {
    const result = token('--help');
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(usage);
  });

  it('prints the usage line, not a stack trace, for an unknown flag', () => {
    const result = token('--tenant', tenant, '--sub', 'alice', '--tenat', 'x');
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(usage);
    expect(result.stderr).toContain("Unknown option '--tenat'");
    expect(result.stderr).not.toMatch(/\n\s+at /);
  });

  it('prints the usage line for a --ttl that is not a duration', () => {
    const result = token('--tenant', tenant, '--sub', 'alice', '--ttl', 'forever');
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('--ttl "forever" is not a duration such as 30m, 1h or 7d');
    expect(result.stderr).toMatch(usage);
    expect(result.stderr).not.toMatch(/\n\s+at /);
  });

  it('binds an agent token to its roles with --agent-roles', () => {
    const result = token(
      '--tenant',
      tenant,
      '--sub',
      'cfo-runtime',
      '--roles',
      'agent',
      '--agent-roles',
      'CFO,ceo',
    );
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    const payload = JSON.parse(Buffer.from(result.stdout.trim().split('.')[1] ?? '', 'base64url').toString());
    expect(payload).toMatchObject({ roles: ['agent'], agent_roles: ['cfo', 'ceo'] });
  });

  it('refuses --agent-roles on a token without the agent role, or naming no role', () => {
    const chairman = token(
      '--tenant',
      tenant,
      '--sub',
      'alice',
      '--roles',
      'chairman',
      '--agent-roles',
      'cfo',
    );
    expect(chairman.code).toBe(2);
    expect(chairman.stderr).toContain('--agent-roles binds an agent token: add agent to --roles');
    const malformed = token('--tenant', tenant, '--sub', 'a', '--roles', 'agent', '--agent-roles', 'c f o');
    expect(malformed.code).toBe(2);
    expect(malformed.stderr).toContain('--agent-roles takes 1 to 100 agent roles such as cfo,ceo, not c f o');
    expect(malformed.stderr).toMatch(usage);
  });

  it('prints a signed token for good input', () => {
    const result = token(
      '--tenant',
      tenant,
      '--sub',
      'alice',
      '--roles',
      'chairman,operator',
      '--ttl',
      '30m',
    );
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    expect(result.stdout.trim()).toMatch(/^ey[\w-]+\.[\w-]+\.[\w-]+$/);
  });
});
