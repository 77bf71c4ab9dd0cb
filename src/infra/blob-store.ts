import { createHash, randomBytes } from 'node:crypto';
import { constants } from 'node:fs';
import { copyFile, mkdir, open, readFile, rename, rm, stat } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';
import { type BlobStore, isSha256Hex } from '../domain/agents/blob-store.js';

/** Blobs as files under `rootDir`: `<root>/<sha[0..2]>/<sha[2..4]>/<sha>`. */
export function createBlobStore(rootDir: string): BlobStore {
  const root = resolve(rootDir);

  // Only ever called with a validated digest, so the path cannot leave the root.
  const pathFor = (sha256: string): string => join(root, sha256.slice(0, 2), sha256.slice(2, 4), sha256);

  return {
    async put(content, digest) {
      const file = content instanceof Uint8Array ? undefined : content;
      const sha256 = file
        ? validDigest(file.sha256)
        : digest !== undefined
          ? validDigest(digest)
          : createHash('sha256')
              .update(content as Uint8Array)
              .digest('hex');
      const path = pathFor(sha256);
      const size = file ? file.size : (content as Uint8Array).byteLength;
      // A file of another size under this name cannot be this content (e.g. truncated by a crash), so rewrite it.
      if ((await fileSize(path)) !== size)
        await writeAtomically(path, file ? { copyOf: file.path } : (content as Uint8Array));
      return { sha256, path, size };
    },

    async get(sha256) {
      try {
        return await readFile(pathFor(validDigest(sha256)));
      } catch (error) {
        if (isNotFound(error)) return null;
        throw error;
      }
    },

    async has(sha256) {
      return (await fileSize(pathFor(validDigest(sha256)))) !== null;
    },

    async remove(sha256) {
      await rm(pathFor(validDigest(sha256)), { force: true });
    },
  };
}

/**
 * Readers never see a partly written blob: the content goes to a temporary file in the same directory (hence
 * the same file system), is flushed to disk, and is then renamed over the final name in one step.
 */
async function writeAtomically(path: string, content: Uint8Array | { copyOf: string }): Promise<void> {
  const directory = dirname(path);
  await mkdir(directory, { recursive: true });
  const temporary = join(directory, `.${randomBytes(8).toString('hex')}.tmp`);
  try {
    // A file's content is copied in the kernel (a clone where the file system can), never read into memory.
    if (!(content instanceof Uint8Array)) {
      await copyFile(content.copyOf, temporary, constants.COPYFILE_EXCL | constants.COPYFILE_FICLONE);
    }
    const handle = await open(temporary, content instanceof Uint8Array ? 'wx' : 'r+', 0o644);
    try {
      if (content instanceof Uint8Array) await handle.writeFile(content);
      else await handle.chmod(0o644);
      await handle.sync();
    } finally {
      await handle.close();
    }
    await rename(temporary, path);
  } catch (error) {
    await rm(temporary, { force: true });
    throw error;
  }
}

function validDigest(sha256: string): string {
  if (!isSha256Hex(sha256)) throw new TypeError('sha256 must be 64 hexadecimal characters');
  return sha256.toLowerCase();
}

async function fileSize(path: string): Promise<number | null> {
  try {
    const stats = await stat(path);
    return stats.isFile() ? stats.size : null;
  } catch (error) {
    if (isNotFound(error)) return null;
    throw error;
  }
}

function isNotFound(error: unknown): boolean {
  return error instanceof Error && 'code' in error && (error.code === 'ENOENT' || error.code === 'ENOTDIR');
}
