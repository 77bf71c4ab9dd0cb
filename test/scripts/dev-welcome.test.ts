import { spawnSync } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { copyMigratedPGliteDir, databaseKind } from '../support/database.js';
import { runMain } from '../support/main-process.js';

const dirs: string[] = [];
afterAll(async () => {
  await Promise.all(dirs.map((dir) => rm(dir, { recursive: true, force: true })));
});

const tempDir = async (prefix: string) => {
  const dir = await mkdtemp(path.join(tmpdir(), prefix));
  dirs.push(dir);
  return dir;
};

// A start-up message and a command-line tool: one project is enough.
describe.runIf(databaseKind === 'pglite')('the development start-up message', () => {
  it('prints a token command that signs, from another shell and directory, tokens the server accepts', async () => {
    // A relative DATA_DIR, resolved against the server's working directory.
    const serverDir = await tempDir('boardroom-welcome-');
    // The subject is the message, not the first start: DATA_DIR holds a migrated copy.
    await copyMigratedPGliteDir(path.join(serverDir, 'state', 'pglite'));
    const main = runMain({ DATA_DIR: 'state', AUTH_JWT_SECRET: '' }, { cwd: serverDir });
    const [, command] = await main.waitFor(/More tokens[^:\n]*:\s*(?:\n\s*)?(\S.*)\n/);
    const [, url] = /Start page: (http:\/\/\S+)\//.exec(main.output()) ?? [];
    expect(command).toContain(`DATA_DIR=${path.join(serverDir, 'state')}`);

    // Another shell: another directory, none of the server's environment. The pre-script that rebuilds a
    // stale dist/ is skipped (ignore-scripts): the command itself runs dist/token.js.
    const shell = spawnSync('sh', ['-c', command as string], {
      cwd: await tempDir('boardroom-elsewhere-'),
      env: { PATH: process.env.PATH, HOME: process.env.HOME, npm_config_ignore_scripts: 'true' },
      encoding: 'utf8',
    });
    expect(shell.stderr).not.toMatch(/ERR!/);
    expect(shell.status).toBe(0);
    const token = shell.stdout.trim().split('\n').at(-1) as string;
    expect(token).toMatch(/^ey[\w-]+\.[\w-]+\.[\w-]+$/);

    const response = await fetch(`${url}/api/v1/agents/ceo/vitals`, {
      headers: { authorization: `Bearer ${token}` },
    });
    expect(response.status).toBe(200);
    main.child.kill('SIGTERM');
    await main.exited;
  }, 120_000);
});
