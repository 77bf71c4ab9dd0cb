import { freeBytes } from './data-dir.js';

/** Free space under DATA_DIR after which an instance that ran out of disk is ready again. */
export const MIN_FREE_BYTES = 16 * 1024 * 1024;

export interface StorageGuard {
  /** A write failed for lack of disk space: the instance is unready until space returns. */
  noteDiskFull(): void;
  /** False after a disk-full failure until at least MIN_FREE_BYTES are free under DATA_DIR again. */
  ready(): Promise<boolean>;
}

/**
 * Readiness of DATA_DIR's disk (PGlite's files and attachment blobs). A full disk is noticed by the write
 * that fails (answered 503), not guessed from a threshold, so a small disk that still has room is not
 * declared unready; from then on `/readyz` answers 503 until space has been freed.
 */
export function createStorageGuard(dataDir: string, minFreeBytes = MIN_FREE_BYTES): StorageGuard {
  let full = false;
  return {
    noteDiskFull() {
      full = true;
    },
    async ready() {
      if (!full) return true;
      const free = await freeBytes(dataDir).catch(() => 0);
      if (free >= minFreeBytes) full = false;
      return !full;
    },
  };
}
