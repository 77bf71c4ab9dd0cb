import { beforeAll, describe, expect, it } from 'vitest';
import {
  isPayloadTooLarge,
  POOLED_BODY_BUFFERS,
  POOLED_BODY_MAX_BYTES,
  POOLED_BODY_MIN_BYTES,
  pooledBodyBytes,
  releasePooledBodies,
  withBody,
} from '../../src/http/body.js';
import { bodyText, parseJsonBody } from '../../src/http/json-body.js';

/** A body read as REST and MCP read theirs: its bytes, bounded, then as text. */
const readBodyText = (request: Request, maxBytes: number) => withBody(request, maxBytes, bodyText);

/** A request whose body arrives in the given chunks. */
function requestOf(...chunks: Uint8Array[]): Request {
  return declaredRequestOf(null, ...chunks);
}

/** The same, with a Content-Length header (which a stream need not keep to). */
function declaredRequestOf(contentLength: number | null, ...chunks: Uint8Array[]): Request {
  const body = new ReadableStream<Uint8Array>({
    start(controller) {
      for (const chunk of chunks) controller.enqueue(chunk);
      controller.close();
    },
  });
  const headers = contentLength === null ? {} : { 'content-length': String(contentLength) };
  // @ts-expect-error `duplex` is required for a streamed body but missing from the DOM types
  return new Request('http://yoga/api/v1/x', { method: 'POST', body, headers, duplex: 'half' });
}

const bytes = (...values: number[]) => Uint8Array.from(values);
const utf8 = (text: string) => new TextEncoder().encode(text);

/** An ASCII body of about 200 KB and the three chunks it arrives in. */
const text = `{"data":"${'QUJD'.repeat(50_000)}"}`;
const encoded = utf8(text);
const chunks = [encoded.subarray(0, 65_536), encoded.subarray(65_536, 131_072), encoded.subarray(131_072)];

describe('readBodyText', () => {
  it('reads an ASCII body of several chunks as it is', async () => {
    expect(await readBodyText(requestOf(...chunks), 1024 * 1024)).toBe(text);
  });

  it('decodes UTF-8 split between chunks and drops a leading byte order mark', async () => {
    const encoded = utf8('{"message":"Grüße, Łódź 😀"}');
    const at = encoded.indexOf(0xc3) + 1; // inside `ü`

    expect(
      await readBodyText(
        requestOf(bytes(0xef, 0xbb, 0xbf), encoded.subarray(0, at), encoded.subarray(at)),
        1024,
      ),
    ).toBe('{"message":"Grüße, Łódź 😀"}');
  });

  it('reads a malformed UTF-8 sequence as U+FFFD', async () => {
    expect(await readBodyText(requestOf(utf8('"a'), bytes(0xff, 0xc3), utf8('b"')), 1024)).toBe(
      '"a\ufffd\ufffdb"',
    );
  });

  it('reads a body of one chunk, and no body as empty text', async () => {
    expect(await readBodyText(requestOf(utf8('{"a":1}')), 1024)).toBe('{"a":1}');
    expect(await readBodyText(new Request('http://yoga/api/v1/x'), 1024)).toBe('');
  });

  it('refuses a body past the limit', async () => {
    const refusal = await readBodyText(requestOf(new Uint8Array(600), new Uint8Array(600)), 1024).catch(
      (error: unknown) => error,
    );

    expect(isPayloadTooLarge(refusal)).toBe(true);
  });

  describe('with a Content-Length', () => {
    it('reads the declared bytes, arriving in chunks, as they are', async () => {
      expect(await readBodyText(declaredRequestOf(encoded.length, ...chunks), 1024 * 1024)).toBe(text);
    });

    it('reads fewer bytes than declared as they came', async () => {
      expect(await readBodyText(declaredRequestOf(encoded.length + 100, ...chunks), 1024 * 1024)).toBe(text);
    });

    it('reads more bytes than declared, in order', async () => {
      for (const declared of [1, 65_536, 65_537, encoded.length - 1]) {
        expect(await readBodyText(declaredRequestOf(declared, ...chunks), 1024 * 1024)).toBe(text);
      }
    });

    it('refuses a body past the limit whatever it declared', async () => {
      for (const declared of [1_000, 1_024, 5_000]) {
        const refusal = await readBodyText(
          declaredRequestOf(declared, new Uint8Array(600), new Uint8Array(600)),
          1024,
        ).catch((error: unknown) => error);

        expect(isPayloadTooLarge(refusal)).toBe(true);
      }
    });
  });
});

describe('large bodies', () => {
  const MiB = 1024 * 1024;
  // The pool is the process's: other files of this worker may have left buffers in it.
  beforeAll(releasePooledBodies);
  /** A JSON body of `size` bytes with a long string of `fill`, in chunks of 64 KiB, with its Content-Length. */
  const largeRequest = (size: number, fill: string) => {
    const body = utf8(`{"data":"${fill.repeat(size - 11)}"}`);
    const parts = Array.from({ length: Math.ceil(size / 65_536) }, (_, i) =>
      body.subarray(i * 65_536, (i + 1) * 65_536),
    );
    return declaredRequestOf(size, ...parts);
  };
  /** Several large bodies read at once, so that none can take the buffer another left. */
  const readAtOnce = (count: number, size: number) =>
    Promise.all(
      Array.from({ length: count }, () =>
        withBody(largeRequest(size, 'A'), 20 * MiB, (bytes) => bytes.length),
      ),
    );

  it("hands the next large body the buffer the last one left, holding only that body's bytes", async () => {
    let first: ArrayBufferLike | undefined;
    const value = await withBody(largeRequest(2 * MiB, 'A'), 4 * MiB, (bytes) => {
      first = bytes.buffer;
      return parseJsonBody(bytes);
    });
    const second = await withBody(largeRequest(MiB + 100, 'B'), 4 * MiB, (bytes) => ({
      buffer: bytes.buffer,
      text: bodyText(bytes),
    }));

    expect(second.buffer).toBe(first);
    // The second body is shorter and fills the buffer only so far: nothing of the first shows through.
    expect(second.text).toBe(`{"data":"${'B'.repeat(MiB + 100 - 11)}"}`);
    // What the first body was parsed into is its own: the buffer's new bytes do not change it.
    expect(value).toEqual({ data: 'A'.repeat(2 * MiB - 11) });
  });

  it('keeps a buffer when the use of the bytes throws, and nothing of the refused body reaches the next', async () => {
    const refusal = await withBody(largeRequest(2 * MiB, 'A'), 4 * MiB, () => {
      throw new SyntaxError('refused');
    }).catch((error: unknown) => error);
    const next = await withBody(largeRequest(2 * MiB, 'C'), 4 * MiB, bodyText);

    expect(refusal).toBeInstanceOf(SyntaxError);
    expect(next).toBe(`{"data":"${'C'.repeat(2 * MiB - 11)}"}`);
  });

  /** A request declaring `size` bytes whose client goes away after the first 64 KiB. */
  const abandonedRequest = (size: number) => {
    let sent = false;
    const body = new ReadableStream<Uint8Array>({
      pull(controller) {
        if (sent) controller.error(new Error('the client went away'));
        else controller.enqueue(utf8('A'.repeat(65_536)));
        sent = true;
      },
    });
    const headers = { 'content-length': String(size) };
    // @ts-expect-error `duplex` is required for a streamed body but missing from the DOM types
    return new Request('http://yoga/api/v1/x', { method: 'POST', body, headers, duplex: 'half' });
  };

  it('gets the buffer back of a body that never arrives whole, or arrives longer than declared', async () => {
    // A buffer of 2 MiB is kept: each body below takes it (or one like it) while it is read.
    await withBody(largeRequest(2 * MiB, 'A'), 4 * MiB, bodyText);
    const kept = pooledBodyBytes();

    const abandoned = await withBody(abandonedRequest(2 * MiB), 4 * MiB, bodyText).catch(
      (error: unknown) => error,
    );
    expect(abandoned).toMatchObject({ message: 'the client went away' });
    expect(pooledBodyBytes()).toBe(kept);

    const longer = utf8(`{"data":"${'D'.repeat(2 * MiB - 11)}"} `);
    const text = await withBody(
      declaredRequestOf(2 * MiB, longer.subarray(0, MiB), longer.subarray(MiB)),
      4 * MiB,
      bodyText,
    );
    expect(text).toBe(`{"data":"${'D'.repeat(2 * MiB - 11)}"} `);
    expect(pooledBodyBytes()).toBe(kept);
  });

  it(`keeps at most ${POOLED_BODY_BUFFERS} buffers, none for small or very large bodies`, async () => {
    // Every buffer so far is 2 MiB long (a body's length rounded up to whole MiBs).
    await readAtOnce(POOLED_BODY_BUFFERS + 3, 2 * MiB);
    const kept = pooledBodyBytes();

    expect(kept).toBe(POOLED_BODY_BUFFERS * 2 * MiB);

    await readAtOnce(POOLED_BODY_BUFFERS + 1, POOLED_BODY_MAX_BYTES + 1);
    await withBody(largeRequest(POOLED_BODY_MIN_BYTES - 1, 'A'), 20 * MiB, bodyText);

    expect(pooledBodyBytes()).toBe(kept);
  });
});
