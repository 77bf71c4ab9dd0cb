import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { copyMigratedPGliteDir, databaseKind } from '../support/database.js';
import { READY, runMain } from '../support/main-process.js';

const dirs: string[] = [];
afterAll(async () => {
  for (const dir of dirs) await rm(dir, { recursive: true, force: true });
});

const RESTARTS = 10;

// A supervisor restarts a crashed instance at once, before the killed process has been reaped: DATA_DIR's
// lock must not keep the new start out.
describe.runIf(databaseKind === 'pglite')('a restart right after kill -9 on the same DATA_DIR', () => {
  it(`starts every time, ${RESTARTS} kills in a row`, async () => {
    const dataDir = await mkdtemp(path.join(tmpdir(), 'boardroom-restart-'));
    dirs.push(dataDir);
    // The subject is every start after a kill: the first starts on a migrated copy, as a first start leaves it.
    await copyMigratedPGliteDir(path.join(dataDir, 'pglite'));
    let running = runMain({ DATA_DIR: dataDir });
    await running.waitFor(READY);
    for (let restart = 1; restart <= RESTARTS; restart++) {
      running.child.kill('SIGKILL');
      const next = runMain({ DATA_DIR: dataDir });
      const [ready] = await Promise.race([
        next.waitFor(READY),
        next.exited.then(() => [`restart ${restart} exited:\n${next.output()}`]),
      ]);
      expect(ready).toMatch(READY);
      running = next;
    }
    running.child.kill('SIGTERM');
    expect((await running.exited).code).toBe(0);
  }, 600_000);
});
