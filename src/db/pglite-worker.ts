/**
 * The thread that runs the embedded database: PGlite (PostgreSQL compiled to WebAssembly) and its Prisma
 * driver adapter, so that parsing, planning and executing SQL never run on the gateway's event loop. The
 * gateway's thread speaks to it with the requests of src/db/pglite-protocol.ts (see src/db/pglite-remote.ts).
 * It imports nothing of the gateway: the built copy is dist/pglite-worker.js.
 */
import v8 from 'node:v8';
import { runInNewContext } from 'node:vm';
import { parentPort, workerData } from 'node:worker_threads';
import { PGlite } from '@electric-sql/pglite';
import type { SqlDriverAdapter, Transaction } from '@prisma/driver-adapter-utils';
import { PrismaPGlite } from 'pglite-prisma-adapter';
import type { Call, Event, PGliteWorkerData, Reply, SerializedError } from './pglite-protocol.js';

if (!parentPort) throw new Error('pglite-worker runs as a worker thread');
const port = parentPort;
const { dataDir, startParams, loadDataDir } = workerData as PGliteWorkerData;

const send = (message: Reply | Event) => port.postMessage(message);

/**
 * Own properties that survive the structured clone; a DriverAdapterError's `cause` is a plain object.
 * PGlite's file system layer throws objects that are not Errors (Emscripten's `ErrnoError { errno }`).
 */
function serializeError(error: unknown): SerializedError {
  if (!error || typeof error !== 'object') return { name: 'Error', message: String(error), props: {} };
  const { name, message, stack } = error as { name?: unknown; message?: unknown; stack?: unknown };
  const props: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(error)) {
    if (value === null || ['string', 'number', 'boolean', 'bigint', 'undefined'].includes(typeof value)) {
      props[key] = value;
    } else if (key === 'cause' && !(value instanceof Error)) {
      try {
        props[key] = structuredClone(value);
      } catch {}
    }
  }
  return {
    name: typeof name === 'string' ? name : 'Error',
    message: typeof message === 'string' ? message : String(error),
    stack: typeof stack === 'string' ? stack : undefined,
    props,
  };
}

/** Opens PGlite and its adapter; tells the gateway's thread `ready`, or `failed` (and this thread ends). */
async function open(): Promise<PGlite | undefined> {
  try {
    return await PGlite.create(dataDir, {
      startParams: [...PGlite.defaultStartParams, ...startParams],
      ...(loadDataDir ? { loadDataDir: new Blob([loadDataDir as Uint8Array<ArrayBuffer>]) } : {}),
    });
  } catch (error) {
    send({ event: 'failed', error: serializeError(error) });
    return undefined;
  }
}

type Parsers = PGlite['parsers'];
type QueryOptions = Parameters<PGlite['query']>[2];

/**
 * PGlite as the adapter sees it. pglite-prisma-adapter passes its type parsers with every statement, and
 * PGlite then copies its own table (every type of the database and its array type, a few hundred entries)
 * and the adapter's into a new object for each one: ~230 µs per statement, more than PostgreSQL's own work
 * on a short read. The adapter's parsers are one constant object, so they are merged into the instance's
 * table once and statements run without them; `ownParsers` keeps the table PGlite had, for what the
 * gateway reads apart from the adapter (see `rows`).
 */
function adapterClient(pglite: PGlite): { client: PGlite; ownParsers: Parsers } {
  const ownParsers = { ...pglite.parsers };
  let adapterParsers: NonNullable<QueryOptions>['parsers'];
  const withoutParsers = (options: QueryOptions): QueryOptions => {
    if (!options?.parsers) return options;
    if (options.parsers !== adapterParsers) {
      adapterParsers = options.parsers;
      Object.assign(pglite.parsers, adapterParsers);
    }
    const { parsers: _merged, ...rest } = options;
    return rest;
  };
  const client = Object.create(pglite, {
    query: {
      value: (sql: string, params?: unknown[], options?: QueryOptions) =>
        pglite.query(sql, params, withoutParsers(options)),
    },
    exec: { value: (sql: string, options?: QueryOptions) => pglite.exec(sql, options) },
    transaction: {
      value: <T>(run: (tx: Parameters<Parameters<PGlite['transaction']>[0]>[0]) => Promise<T>) =>
        pglite.transaction((tx) =>
          run(
            Object.create(tx, {
              query: {
                value: (sql: string, params?: unknown[], options?: QueryOptions) =>
                  tx.query(sql, params, withoutParsers(options)),
              },
            }),
          ),
        ),
    },
  }) as PGlite;
  return { client, ownParsers };
}

/**
 * Keeps this thread's event loop alive until the port listens. While PGlite opens, the thread mostly awaits
 * WebAssembly compilation, which V8 runs as background tasks; with no active handle the loop would end, and
 * Node then blocks the thread until every background task is done. A concurrent (Maglev) compilation for this
 * thread that needs a garbage collection waits for this very thread, so both waited forever: start-up never
 * finished, one start in four on Node 24 (nodejs/node#54918; docs/decisions/0002-pglite-worker-thread.md,
 * "The database thread's start-up"). With a timer pending the loop waits in epoll, where V8's requests reach
 * it.
 */
const keepAlive = setInterval(() => {}, 2 ** 30);

// No top-level await: from the sources (development, tests) this file is loaded as CommonJS.
void open()
  .then(async (pglite) => {
    // When PGlite could not start nothing listens on the port, so the thread ends on its own.
    if (!pglite) return;
    const { client, ownParsers } = adapterClient(pglite);
    serve(pglite, await new PrismaPGlite(client).connect(), ownParsers);
  })
  .finally(() => clearInterval(keepAlive));

function serve(pglite: PGlite, adapter: SqlDriverAdapter, ownParsers: Parsers) {
  // The adapter's own conversion of a database error into a DriverAdapterError.
  const { onError } = adapter as unknown as { onError(error: unknown): never };
  const transactions = new Map<number, Transaction>();
  let nextTransaction = 1;
  const unlisteners = new Map<string, () => Promise<void>>();

  async function perform(call: Call): Promise<unknown> {
    switch (call.op) {
      case 'queryRaw':
      case 'executeRaw': {
        const target = call.tx === undefined ? adapter : transactions.get(call.tx);
        if (!target) throw new Error(`transaction ${call.tx} is not open`);
        return call.op === 'queryRaw' ? target.queryRaw(call.query) : target.executeRaw(call.query);
      }
      case 'executeScript':
        // Awaited here (the adapter starts the script without awaiting it, so its failure would be lost).
        await pglite.exec(call.script).catch((error: unknown) => onError.call(adapter, error));
        return undefined;
      case 'startTransaction': {
        const transaction = await adapter.startTransaction(call.isolationLevel);
        const tx = nextTransaction++;
        transactions.set(tx, transaction);
        return { tx, options: transaction.options };
      }
      case 'commit':
      case 'rollback': {
        const transaction = transactions.get(call.tx);
        if (!transaction) throw new Error(`transaction ${call.tx} is not open`);
        transactions.delete(call.tx);
        return call.op === 'commit' ? transaction.commit() : transaction.rollback();
      }
      case 'rows':
        // PGlite's own parsing (Date, number), as before the adapter's parsers were merged into its table.
        return (await pglite.query(call.sql, [], { parsers: ownParsers })).rows;
      case 'listen':
        if (!unlisteners.has(call.channel)) {
          const channel = call.channel;
          unlisteners.set(channel, await pglite.listen(channel, () => send({ event: 'notify', channel })));
        }
        return undefined;
      case 'unlisten':
        await unlisteners.get(call.channel)?.();
        unlisteners.delete(call.channel);
        return undefined;
      case 'dumpDataDir':
        return new Uint8Array(await (await pglite.dumpDataDir('none')).arrayBuffer());
      case 'close':
        await pglite.close();
        return undefined;
    }
  }

  port.on('message', (call: Call) => {
    perform(call).then(
      (value) => send({ id: call.id, ok: true, value }),
      (error: unknown) => send({ id: call.id, ok: false, error: serializeError(error) }),
    );
  });
  send({ event: 'ready' });
  setImmediate(collectStartGarbage);
}

/**
 * Opening PGlite leaves hundreds of MB of WebAssembly memory unreferenced (initdb's instance on a first
 * start: ~600 MB resident until collected). On the gateway's thread later allocations soon collect it; this
 * thread allocates nothing until the first query, so it asks V8 for one full collection after opening.
 */
function collectStartGarbage() {
  v8.setFlagsFromString('--expose-gc');
  (runInNewContext('gc') as () => void)();
}
