import { connect } from 'node:net';
import { SignJWT } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MAX_BODY_BYTES } from '../../src/http/body.js';
import type { RunningServer } from '../../src/server.js';
import { PDF } from '../domain/agents/attachment-samples.js';
import { type Caller, createTestApp, type TestApp } from '../support/app.js';
import { listen } from '../support/ws.js';

const MiB = 1024 * 1024;
const CHUNK = 64 * 1024;

/** A body of `bytes` bytes of broken JSON, streamed without Content-Length; counts what was pulled. */
function streamedBody(bytes: number) {
  const pulled = { bytes: 0 };
  const stream = new ReadableStream<Uint8Array>({
    pull(controller) {
      if (pulled.bytes >= bytes) {
        controller.close();
        return;
      }
      const chunk = new Uint8Array(Math.min(CHUNK, bytes - pulled.bytes)).fill(0x7b); // '{'
      pulled.bytes += chunk.byteLength;
      controller.enqueue(chunk);
    },
  });
  return { stream, pulled };
}

let t: TestApp;
let member: Caller;
let forged: string;

beforeAll(async () => {
  t = await createTestApp();
  member = await t.caller(['member']);
  forged = await new SignJWT({ tenant_id: member.tenantId, roles: ['member'] })
    .setProtectedHeader({ alg: 'HS256' })
    .setSubject(member.sub)
    .setExpirationTime('5m')
    .sign(new TextEncoder().encode('a-different-secret-that-is-long-enough-to-sign'));
});
afterAll(() => t.close());

async function send(path: string, body: BodyInit, headers: Record<string, string> = {}) {
  const response = await t.app.yoga.fetch(`http://yoga${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body,
    ...(body instanceof ReadableStream ? { duplex: 'half' } : {}),
  } as RequestInit);
  const text = await response.text();
  return { status: response.status, body: text ? JSON.parse(text) : null };
}

// Broken JSON: were it parsed, the answer would be 400 / 422, not 413.
const twoMiB = '{'.repeat(2 * MiB);

/** The answer over GraphQL to a body over the limit. */
const tooLargeOverGraphql = {
  status: 413,
  body: {
    errors: [
      {
        message: `Request body exceeds ${MAX_BODY_BYTES} bytes`,
        extensions: { code: 'PAYLOAD_TOO_LARGE' },
      },
    ],
  },
};

/** The answer of a REST route to a body over the limit. */
const tooLargeOverRest = { status: 413, body: { detail: `Request body exceeds ${MAX_BODY_BYTES} bytes` } };

/** A 3 MiB PDF, base64-encoded: over the 1 MiB limit, under the chat route's. */
const largeAttachment = Buffer.concat([PDF, Buffer.alloc(3 * MiB)]).toString('base64');
const chatWithLargeAttachment = {
  message: 'see attached',
  attachments: [{ data: largeAttachment, mime_type: 'application/pdf' }],
};

describe('body limit before authentication', () => {
  it('answers 413 on /graphql to a 2 MiB body without a token, without parsing it', async () => {
    const response = await send('/graphql', twoMiB);
    expect(response).toEqual(tooLargeOverGraphql);
  });

  it('answers 413 on /graphql to a 2 MiB body with a forged token', async () => {
    expect((await send('/graphql', twoMiB, { authorization: `Bearer ${forged}` })).status).toBe(413);
  });

  it('answers 413 {"detail"} on a REST route to a 2 MiB body without a token, without parsing it', async () => {
    expect(await send('/api/v1/agents/ceo/chat', twoMiB)).toEqual(tooLargeOverRest);
  });

  it('stops reading a streamed body without Content-Length at the limit on /graphql', async () => {
    const { stream, pulled } = streamedBody(8 * MiB);
    const response = await send('/graphql', stream);
    expect(response.status).toBe(413);
    expect(response.body.errors[0].extensions.code).toBe('PAYLOAD_TOO_LARGE');
    expect(pulled.bytes).toBeLessThan(MAX_BODY_BYTES + 4 * CHUNK);
  });
});

describe('body limit after authentication', () => {
  it('stops reading a streamed body without Content-Length at the route’s limit on a REST route', async () => {
    const operator = await t.caller(['operator']);
    const { stream, pulled } = streamedBody(8 * MiB);
    const response = await send('/api/v1/hiring/p-1/onboard/c-1', stream, {
      authorization: `Bearer ${operator.token}`,
    });
    expect(response).toEqual(tooLargeOverRest);
    expect(pulled.bytes).toBeLessThan(MAX_BODY_BYTES + 4 * CHUNK);
  });

  it('refuses a large GraphQL body of an authenticated caller for any operation but sendChatMessage', async () => {
    const body = JSON.stringify({
      query: 'query Padded { me { sub } }',
      variables: { pad: 'x'.repeat(2 * MiB) },
    });
    const response = await send('/graphql', body, { authorization: `Bearer ${member.token}` });
    expect(response).toEqual(tooLargeOverGraphql);
  });

  it('admits an authenticated chat with a 3 MiB attachment over REST', async () => {
    const body = JSON.stringify(chatWithLargeAttachment);
    const response = await send('/api/v1/agents/ceo/chat', body, { authorization: `Bearer ${member.token}` });
    expect(response.status).toBe(202);
  });

  it('refuses a 3 MiB sendChatMessage JSON body of an authenticated caller: files travel as multipart', async () => {
    const body = JSON.stringify({
      query: `mutation Send($input: ChatMessageInput!) { sendChatMessage(role: "ceo", input: $input) { status } }`,
      variables: {
        input: {
          message: 'see attached',
          attachments: [{ data: largeAttachment, mimeType: 'application/pdf' }],
        },
      },
    });
    const response = await send('/graphql', body, { authorization: `Bearer ${member.token}` });
    expect(response).toEqual(tooLargeOverGraphql);
  });

  it('applies the chat route’s large limit only to a verified caller: a forged token gets 1 MiB', async () => {
    const body = JSON.stringify(chatWithLargeAttachment);
    expect(await send('/api/v1/agents/ceo/chat', body, { authorization: `Bearer ${forged}` })).toEqual(
      tooLargeOverRest,
    );
  });
});

describe('a 72 MiB JSON body to /graphql over a real connection', () => {
  let server: RunningServer;
  beforeAll(async () => {
    server = await listen(t);
  });
  afterAll(() => server.close());

  /**
   * Sends headers declaring `declared` bytes (or chunked when null), then writes the body 64 KiB at a time
   * until the server answers or closes; resolves with the answer's status and the bytes written by then.
   */
  function sendUntilAnswered(declared: number | null): Promise<{ status: number; written: number }> {
    const { hostname, port } = new URL(server.url);
    const total = 72 * MiB;
    return new Promise((resolve, reject) => {
      const socket = connect(Number(port), hostname);
      let written = 0;
      let answer = '';
      let done = false;
      const finish = () => {
        if (done) return;
        done = true;
        socket.destroy();
        resolve({ status: Number(/^HTTP\/1\.1 (\d{3})/.exec(answer)?.[1]), written });
      };
      socket.setEncoding('latin1');
      socket.on('data', (chunk: string) => {
        answer += chunk;
        if (answer.includes('\r\n\r\n')) finish();
      });
      socket.on('error', () => finish());
      socket.on('close', () => (answer ? finish() : reject(new Error('closed without an answer'))));
      socket.on('connect', () => {
        socket.write(
          `POST /graphql HTTP/1.1\r\nHost: boardroom\r\nContent-Type: application/json\r\nAuthorization: Bearer ${member.token}\r\n${
            declared === null ? 'Transfer-Encoding: chunked' : `Content-Length: ${declared}`
          }\r\n\r\n`,
        );
        const chunk = Buffer.alloc(CHUNK, 0x7b);
        const framed =
          declared === null
            ? Buffer.concat([Buffer.from(`${CHUNK.toString(16)}\r\n`), chunk, Buffer.from('\r\n')])
            : chunk;
        const pump = () => {
          while (!done && written < total) {
            written += CHUNK;
            if (!socket.write(framed)) {
              socket.once('drain', pump);
              return;
            }
          }
        };
        pump();
      });
    });
  }

  it('answers 413 to a declared 72 MiB before the body is sent', async () => {
    const { status, written } = await sendUntilAnswered(72 * MiB);
    expect(status).toBe(413);
    expect(written).toBeLessThan(16 * MiB);
  });

  it('answers 413 to a chunked body once it passes 1 MiB, long before 72 MiB are sent', async () => {
    const { status, written } = await sendUntilAnswered(null);
    expect(status).toBe(413);
    expect(written).toBeLessThan(16 * MiB);
  });
});
