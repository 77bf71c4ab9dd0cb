import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';

/**
 * A small tmpfs of its own: a real file system that is read-only or fills up. Mounting needs root (CI runs
 * the suite as root); elsewhere the tests that need one are skipped, and say so.
 */
export interface Tmpfs {
  dir: string;
  /** Changes the size of the mounted file system (its files stay). */
  resize(size: string): void;
  unmount(): void;
}

export function mountTmpfs(size: string, { readOnly = false } = {}): Tmpfs {
  const dir = mkdtempSync(path.join(tmpdir(), 'boardroom-tmpfs-'));
  execFileSync('mount', [
    '-t',
    'tmpfs',
    '-o',
    `${readOnly ? 'ro,' : ''}size=${size},mode=0755`,
    'tmpfs',
    dir,
  ]);
  return {
    dir,
    resize(next) {
      execFileSync('mount', ['-o', `remount,size=${next}`, dir]);
    },
    unmount() {
      execFileSync('umount', [dir]);
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** True when this process may mount a tmpfs (root with CAP_SYS_ADMIN). */
export function canMountTmpfs(): boolean {
  if (process.getuid?.() !== 0) return false;
  const dir = mkdtempSync(path.join(tmpdir(), 'boardroom-tmpfs-probe-'));
  try {
    const mounted = spawnSync('mount', ['-t', 'tmpfs', '-o', 'size=1m', 'tmpfs', dir]).status === 0;
    if (mounted) spawnSync('umount', [dir]);
    return mounted;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
