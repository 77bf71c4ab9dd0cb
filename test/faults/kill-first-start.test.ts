import { randomUUID } from 'node:crypto';
import { afterAll, describe, expect, it } from 'vitest';
import { signToken } from '../../src/auth/tokens.js';
import { readMigrations } from '../../src/db/migrate.js';
import { TEST_SECRET } from '../support/app.js';
import { bookkeeping, freshTarget, type Main, READY, runMain, type Target } from '../support/main-process.js';

// `kill -9` of a server process on a fresh database at points chosen from its own log output, never by
// timing: once its first start has committed every migration but before it listens, then twice while it
// takes concurrent writes, after a fixed number of them were acknowledged. Every start after a kill must
// serve, and every write answered 2xx must be in the database at the end. (Kills in the middle of a
// migration are in test/server/startup-interrupted.test.ts.)

const ROLES = ['ceo', 'cfo', 'coo', 'cto', 'cmo', 'cpo'] as const;
/** Acknowledged writes after which each loaded run is killed. */
const KILL_AFTER = [5, 40] as const;

const cleanups: (() => Promise<void>)[] = [];
afterAll(async () => {
  for (const cleanup of cleanups) await cleanup();
});

async function post(url: string, token: string, path: string, body: unknown) {
  return fetch(`${url}${path}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
}

/**
 * Pauses and resumes roles from one concurrent writer per role until the server goes away; collects
 * the event id of every write answered 2xx. A write cut off by the kill is not acknowledged.
 */
function writeLoad(url: string, token: string, acknowledged: string[]) {
  let stop = false;
  const writers = ROLES.map(async (role, index) => {
    for (let n = index; !stop; n += 1) {
      const action = n % 2 === 0 ? 'pause' : 'resume';
      const response = await post(url, token, `/api/v1/dogfood/agents/${role}/${action}`, {
        actor_user_id: 'chair-1',
      }).catch(() => undefined);
      if (!response) return;
      const body = await response.text().catch(() => undefined);
      if (response.ok && body) acknowledged.push((JSON.parse(body) as { event_id: string }).event_id);
    }
  });
  return {
    async stop() {
      stop = true;
      await Promise.all(writers);
    },
  };
}

async function killed(main: Main): Promise<void> {
  main.child.kill('SIGKILL');
  expect((await main.exited).signal).toBe('SIGKILL');
}

describe('kill -9 during the first start and under write load', () => {
  it('restarts every time, and every acknowledged write is there', async () => {
    const target: Target = await freshTarget('killed');
    cleanups.push(() => target.cleanup());
    const names = (await readMigrations()).migrationDirectories.map((dir) => dir.path);

    // 1. The first start, killed once its migrations are committed, before it listens.
    const first = runMain(target.env);
    await first.waitFor(/"applied":\[.*applied migrations/);
    await killed(first);

    const tenantId = randomUUID();
    const token = await signToken(TEST_SECRET, { tenantId, sub: 'chair-1', roles: ['chairman'] });
    const acknowledged: string[] = [];

    // 2. and 3. Killed under concurrent writes, after a fixed number of them were acknowledged.
    for (const [run, count] of KILL_AFTER.entries()) {
      const main = runMain(target.env);
      const [, url] = (await main.waitFor(READY)) as unknown as [string, string];
      expect(main.output()).not.toContain('applying migration');
      if (run === 0) {
        const live = await post(url, token, '/graphql', {
          query: 'mutation { setDogfoodLiveMode(enabled: true) { dogfoodLiveMode } }',
        });
        expect(live.status).toBe(200);
      }
      const before = acknowledged.length;
      const load = writeLoad(url, token, acknowledged);
      await new Promise<void>((resolve, reject) => {
        const check = setInterval(() => {
          if (acknowledged.length >= before + count) {
            clearInterval(check);
            resolve();
          }
        }, 5);
        void main.exited.then(() => {
          clearInterval(check);
          reject(new Error(`the server exited under load:\n${main.output()}`));
        });
      });
      await killed(main);
      await load.stop();
    }

    // 4. A last start serves, takes a write, and stops cleanly.
    const last = runMain(target.env);
    const [, url] = (await last.waitFor(READY)) as unknown as [string, string];
    const after = await post(url, token, '/api/v1/dogfood/agents/clo/pause', { actor_user_id: 'chair-1' });
    expect(after.status).toBe(200);
    acknowledged.push(((await after.json()) as { event_id: string }).event_id);
    last.child.kill('SIGTERM');
    expect((await last.exited).code).toBe(0);

    expect(acknowledged.length).toBeGreaterThanOrEqual(KILL_AFTER[0] + KILL_AFTER[1] + 1);
    const rows = await target.query<{ id: string; published: boolean }>(
      `SELECT id::text, published_at IS NOT NULL AS published FROM outbox_events WHERE tenant_id = '${tenantId}'`,
    );
    const present = new Set(rows.map((row) => row.id));
    expect(acknowledged.filter((id) => !present.has(id))).toEqual([]);
    // What a killed run left unpublished went out after the restart (the last write may still wait).
    const published = new Set(rows.filter((row) => row.published).map((row) => row.id));
    expect(acknowledged.slice(0, -1).filter((id) => !published.has(id))).toEqual([]);
    expect(await bookkeeping(target)).toEqual(
      names.map((migration_name) => ({ migration_name, finished: 1, unfinished: 0 })),
    );
  }, 120_000);
});
