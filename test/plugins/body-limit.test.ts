import { SignJWT } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MAX_BODY_BYTES } from '../../src/plugins/use-body-limit.js';
import { PDF } from '../domain/agents/attachment-samples.js';
import { type Caller, createTestApp, type TestApp } from '../support/app.js';

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

describe('body limit before authentication', () => {
  it('answers 413 on /graphql to a 2 MiB body without a token, without parsing it', async () => {
    const response = await send('/graphql', twoMiB);
    expect(response).toEqual({
      status: 413,
      body: {
        errors: [
          {
            message: `Request body exceeds ${MAX_BODY_BYTES} bytes`,
            extensions: { code: 'PAYLOAD_TOO_LARGE' },
          },
        ],
      },
    });
  });

  it('answers 413 on /graphql to a 2 MiB body with a forged token', async () => {
    expect((await send('/graphql', twoMiB, { authorization: `Bearer ${forged}` })).status).toBe(413);
  });

  it('answers 413 {"detail"} on a REST route to a 2 MiB body without a token, without parsing it', async () => {
    expect(await send('/api/v1/agents/ceo/chat', twoMiB)).toEqual({
      status: 413,
      body: { detail: `Request body exceeds ${MAX_BODY_BYTES} bytes` },
    });
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
    expect(response).toEqual({
      status: 413,
      body: { detail: `Request body exceeds ${MAX_BODY_BYTES} bytes` },
    });
    expect(pulled.bytes).toBeLessThan(MAX_BODY_BYTES + 4 * CHUNK);
  });

  it('refuses a large GraphQL body of an authenticated caller for any operation but sendChatMessage', async () => {
    const body = JSON.stringify({
      query: 'query Padded { me { sub } }',
      variables: { pad: 'x'.repeat(2 * MiB) },
    });
    const response = await send('/graphql', body, { authorization: `Bearer ${member.token}` });
    expect(response).toEqual({
      status: 413,
      body: {
        errors: [
          {
            message: `Request body exceeds ${MAX_BODY_BYTES} bytes`,
            extensions: { code: 'PAYLOAD_TOO_LARGE' },
          },
        ],
      },
    });
  });

  it('admits an authenticated chat with a 3 MiB attachment over REST', async () => {
    const pdf = Buffer.concat([PDF, Buffer.alloc(3 * MiB)]).toString('base64');
    const body = JSON.stringify({
      message: 'see attached',
      attachments: [{ data: pdf, mime_type: 'application/pdf' }],
    });
    const response = await send('/api/v1/agents/ceo/chat', body, { authorization: `Bearer ${member.token}` });
    expect(response.status).toBe(202);
  });

  it('admits an authenticated sendChatMessage with a 3 MiB attachment over GraphQL', async () => {
    const pdf = Buffer.concat([PDF, Buffer.alloc(3 * MiB)]).toString('base64');
    const { stream } = {
      stream: JSON.stringify({
        query: `mutation Send($input: ChatMessageInput!) { sendChatMessage(role: "ceo", input: $input) { status } }`,
        variables: {
          input: { message: 'see attached', attachments: [{ data: pdf, mimeType: 'application/pdf' }] },
        },
      }),
    };
    const response = await send('/graphql', stream, { authorization: `Bearer ${member.token}` });
    expect(response).toEqual({ status: 200, body: { data: { sendChatMessage: { status: 'pending' } } } });
  });
});
