// Holds DATA_DIR's lock in a process of its own for the lock tests: prints `locked <pid>` once it holds
// it, releases it and exits on SIGTERM.
import { lockDataDir } from '../../src/db/data-dir-lock.js';

const dataDir = process.argv[2];
if (!dataDir) throw new Error('usage: lock-holder.ts <data dir>');
const lock = await lockDataDir(dataDir);
process.stdout.write(`locked ${process.pid}\n`);
process.once('SIGTERM', () => {
  void lock.release().then(() => process.exit(0));
});
setInterval(() => {}, 60_000);
