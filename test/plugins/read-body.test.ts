import { describe, expect, it } from 'vitest';
import { bodyText } from '../../src/json-body.js';
import { isPayloadTooLarge, readBody } from '../../src/plugins/use-body-limit.js';

/** A body read as REST and MCP read theirs: its bytes, bounded, then as text. */
const readBodyText = async (request: Request, maxBytes: number) =>
  bodyText(await readBody(request, maxBytes));

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
