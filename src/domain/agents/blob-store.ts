import { createHash, randomBytes } from 'node:crypto';
import { constants } from 'node:fs';
import { copyFile, mkdir, open, readFile, rename, rm, stat } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';

export interface StoredBlob {
  /** Lower-case hex SHA-256 of the content. */
  sha256: string;
  /** Absolute path of the blob: `<root>/<sha[0..2]>/<sha[2..4]>/<sha>`. */
  path: string;
  size: number;
}

/** Content already written to a file (an upload's spool file), with its digest computed as it was written. */
export interface FileContent {
  path: string;
  /** Lower-case hex SHA-256 of the file's bytes. */
  sha256: string;
  size: number;
}

export interface BlobStore {
  /**
   * Stores bytes, or a file's content (copied, the file is left as it is), under their SHA-256; storing the
   * same content again leaves the existing file untouched. `sha256` is the bytes' digest when the caller has
   * already computed it (as a file's content carries its own), so that it is not computed twice.
   */
  put(content: Uint8Array | FileContent, sha256?: string): Promise<StoredBlob>;
  /** Throws a TypeError unless `sha256` is 64 hexadecimal characters. */
  get(sha256: string): Promise<Buffer | null>;
  /** Throws a TypeError unless `sha256` is 64 hexadecimal characters. */
  has(sha256: string): Promise<boolean>;
  /**
   * Deletes the content; absent content is not an error. Callers make sure nothing references it any more
   * (content is shared by every reference to the same bytes). Throws a TypeError for a malformed digest.
   */
  remove(sha256: string): Promise<void>;
}

const SHA256_HEX = /^[0-9a-f]{64}$/i;

export function isSha256Hex(value: string): boolean {
  return SHA256_HEX.test(value);
}

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
