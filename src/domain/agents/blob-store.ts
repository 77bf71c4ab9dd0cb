/**
 * Attachment content by its SHA-256, as the domain sees it. The store on DATA_DIR's disk is
 * src/infra/blob-store.ts; app.ts builds it.
 */
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
