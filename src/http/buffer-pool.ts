const MiB = 1024 * 1024;

export interface BufferPoolOptions {
  /** Smallest request the pool serves: smaller bytes are cheap to allocate anew. */
  minBytes: number;
  /** Largest request the pool serves, so that what it keeps stays bounded. */
  maxBytes: number;
  /** How many buffers it keeps at most. */
  buffers: number;
}

/**
 * Buffers for large, short-lived bytes (a request body, an attachment's decoded bytes), kept for the next
 * such bytes instead of made anew: V8 counts each new large buffer as external memory until a full
 * collection finds it dead, and new memory costs its first touch (docs/decisions/0027-chat-attachments.md,
 * "Chat attachments"). A buffer is lent by `take` and kept again by `give`, once, after its last reader is
 * done; never shared.
 */
export class BufferPool {
  private readonly kept: ArrayBuffer[] = [];
  private readonly lent = new WeakSet<ArrayBuffer>();

  constructor(private readonly options: BufferPoolOptions) {}

  /**
   * A buffer of at least `bytes`: a kept one that is large enough, else a new one whole MiBs long;
   * undefined when `bytes` is outside the pool's range (the caller allocates as usual).
   */
  take(bytes: number): ArrayBuffer | undefined {
    if (bytes < this.options.minBytes || bytes > this.options.maxBytes) return undefined;
    const index = this.kept.findIndex((buffer) => buffer.byteLength >= bytes);
    const buffer =
      index === -1
        ? Buffer.allocUnsafeSlow(Math.ceil(bytes / MiB) * MiB).buffer
        : (this.kept.splice(index, 1)[0] as ArrayBuffer);
    this.lent.add(buffer);
    return buffer;
  }

  /**
   * Keeps a buffer `take` lent: in a free place, or in place of the smallest kept one if it is larger, so
   * that a few small requests first do not leave every larger one to be made anew. Anything else (or a
   * buffer given back already) is left alone.
   */
  give(buffer: ArrayBufferLike): void {
    if (!(buffer instanceof ArrayBuffer) || !this.lent.delete(buffer)) return;
    if (this.kept.length < this.options.buffers) {
      this.kept.push(buffer);
      return;
    }
    let smallest = 0;
    for (let i = 1; i < this.kept.length; i++) {
      if ((this.kept[i] as ArrayBuffer).byteLength < (this.kept[smallest] as ArrayBuffer).byteLength)
        smallest = i;
    }
    if ((this.kept[smallest] as ArrayBuffer).byteLength < buffer.byteLength) this.kept[smallest] = buffer;
  }

  /** Total bytes of the buffers kept. */
  keptBytes(): number {
    return this.kept.reduce((total, buffer) => total + buffer.byteLength, 0);
  }

  /** Lets go of every kept buffer (those lent out are not given back to it). */
  clear(): void {
    for (const buffer of this.kept) this.lent.delete(buffer);
    this.kept.length = 0;
  }
}
