import { afterAll, describe, expect, it } from 'vitest';
import { readMigrations } from '../../src/db/migrate.js';
import {
  bookkeeping,
  freshTarget as freshMainTarget,
  READY,
  runMain,
  type Target,
} from '../support/main-process.js';

const cleanups: (() => Promise<void>)[] = [];
afterAll(async () => {
  for (const cleanup of cleanups) await cleanup();
});

async function freshTarget(): Promise<Target> {
  const target = await freshMainTarget('interrupted');
  cleanups.push(() => target.cleanup());
  return target;
}

const names = (await readMigrations()).migrationDirectories.map((dir) => dir.path);
const applying = (name: string) => new RegExp(`"migration":"${name}".*applying migration`);

/** Starts again on the same database, checks it serves, stops it; then every migration is there once. */
async function expectCleanRestart(target: Target): Promise<void> {
  const main = runMain(target.env);
  const [, url] = await main.waitFor(READY);
  expect((await fetch(`${url}/readyz`)).status).toBe(200);
  main.child.kill('SIGTERM');
  expect((await main.exited).code).toBe(0);
  expect(await bookkeeping(target)).toEqual(
    names.map((migration_name) => ({ migration_name, finished: 1, unfinished: 0 })),
  );
}

describe('a first start interrupted during its migrations', () => {
  // Where exactly the kill lands inside the named migration varies from run to run; every place must
  // leave a database the next start completes.
  for (const name of [names[0], names[Math.floor(names.length / 2)], names.at(-1)] as string[]) {
    it(`is killed (SIGKILL) while applying ${name}; the next start completes`, async () => {
      const target = await freshTarget();
      const main = runMain(target.env);
      await main.waitFor(applying(name));
      main.child.kill('SIGKILL');
      expect((await main.exited).signal).toBe('SIGKILL');

      await expectCleanRestart(target);
    }, 120_000);
  }

  it('stops on SIGTERM between two migrations and exits 0; the next start completes', async () => {
    const target = await freshTarget();
    const main = runMain(target.env);
    await main.waitFor(applying(names[1] as string));
    main.child.kill('SIGTERM');

    expect((await main.exited).code).toBe(0);
    expect(main.output()).toContain('stopping during start-up');
    expect(main.output()).not.toContain('boardroom is ready');
    await expectCleanRestart(target);
  }, 120_000);
});
