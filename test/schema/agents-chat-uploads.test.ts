import { createHash, randomUUID } from 'node:crypto';
import { readdir } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { MAX_ATTACHMENT_BYTES } from '../../src/domain/agents/attachments.js';
import { PDF, PNG } from '../domain/agents/attachment-samples.js';
import type { Caller, TestApp } from '../support/app.js';
import { withTestAppAndCaller } from '../support/fixtures.js';
import { storedRows } from './agents-support.js';

const SendWithAttachments = `mutation Send($input: ChatMessageInput!) {
  sendChatMessage(role: "ceo", input: $input) { status task { id } }
}`;

type Part = { name: string; value: string } | { name: string; file: Buffer; filename: string; type: string };

/** A multipart/form-data body with its parts in the order given. */
function multipart(parts: Part[]): { body: Buffer; contentType: string } {
  const boundary = `----boardroom-${randomUUID()}`;
  const chunks: Buffer[] = [];
  for (const part of parts) {
    chunks.push(Buffer.from(`--${boundary}\r\n`));
    if ('value' in part) {
      chunks.push(
        Buffer.from(`Content-Disposition: form-data; name="${part.name}"\r\n\r\n${part.value}\r\n`),
      );
    } else {
      chunks.push(
        Buffer.from(
          `Content-Disposition: form-data; name="${part.name}"; filename="${part.filename}"\r\nContent-Type: ${part.type}\r\n\r\n`,
        ),
        part.file,
        Buffer.from('\r\n'),
      );
    }
  }
  chunks.push(Buffer.from(`--${boundary}--\r\n`));
  return { body: Buffer.concat(chunks), contentType: `multipart/form-data; boundary=${boundary}` };
}

/** The parts of a GraphQL multipart request: operations, map, then one file part per attachment. */
function uploadParts(
  files: { file: Buffer; mimeType: string; filename?: string }[],
  message = 'see attached',
  query = SendWithAttachments,
): Part[] {
  return [
    {
      name: 'operations',
      value: JSON.stringify({
        query,
        variables: {
          input: {
            message,
            attachments: files.map(({ mimeType, filename }) => ({ file: null, mimeType, filename })),
          },
        },
      }),
    },
    {
      name: 'map',
      value: JSON.stringify(
        Object.fromEntries(
          files.map((_, index) => [String(index), [`variables.input.attachments.${index}.file`]]),
        ),
      ),
    },
    ...files.map(({ file, mimeType }, index) => ({
      name: String(index),
      file,
      filename: `upload-${index}`,
      type: mimeType,
    })),
  ];
}

interface Answer {
  status: number;
  body: {
    data?: any;
    errors?: { message: string; extensions?: { code?: string; detail?: unknown } }[];
  };
}

let t: TestApp;
let member: Caller;

withTestAppAndCaller(['member'], (made) => ({ t, caller: member } = made));

async function send(parts: Part[], caller: Caller | null = member): Promise<Answer> {
  const { body, contentType } = multipart(parts);
  const response = await t.app.yoga.fetch('http://yoga/graphql', {
    method: 'POST',
    headers: {
      'content-type': contentType,
      accept: 'application/graphql-response+json',
      ...(caller ? { authorization: `Bearer ${caller.token}` } : {}),
    },
    body: new Uint8Array(body),
  });
  return { status: response.status, body: (await response.json()) as Answer['body'] };
}

/** Files left in the upload spool directory (none once every request is answered). */
async function spooled(): Promise<string[]> {
  return readdir(path.join(t.dataDir, 'uploads')).catch(() => []);
}

afterEach(async () => {
  expect(await spooled()).toEqual([]);
});

const uniquePdf = (padding = 0) =>
  Buffer.concat([PDF, Buffer.from(`% ${randomUUID()}\n`), Buffer.alloc(padding, 0x20)]);
const sha256 = (bytes: Buffer) => createHash('sha256').update(bytes).digest('hex');

describe('sendChatMessage with attachments as files (GraphQL multipart request)', () => {
  it('queues the message and stores each file content-addressed, as base64 data would be', async () => {
    const caller = await t.caller(['member']);
    const pdf = uniquePdf(3 * 1024 * 1024);

    const answer = await send(
      uploadParts([{ file: pdf, mimeType: 'application/pdf', filename: 'q3.pdf' }]),
      caller,
    );

    expect(answer.status).toBe(200);
    expect(answer.body.data.sendChatMessage.status).toBe('pending');
    // Buffer#equals: a deep comparison of 3 MiB element by element takes seconds.
    expect((await t.app.services.blobs.get(sha256(pdf)))?.equals(pdf)).toBe(true);
    expect(await storedRows(t, caller.tenantId)).toMatchObject({ tasks: 1, attachments: 1 });
  });

  it('refuses a file over 10 MiB at its field and stores nothing', async () => {
    const caller = await t.caller(['member']);
    const pdf = uniquePdf(MAX_ATTACHMENT_BYTES);

    const answer = await send(uploadParts([{ file: pdf, mimeType: 'application/pdf' }]), caller);

    expect(answer.body.errors?.[0]?.extensions).toMatchObject({
      code: 'BAD_USER_INPUT',
      detail: [
        {
          type: 'value_error',
          loc: ['input', 'attachments', 0, 'file'],
          msg: 'Value error, attachment exceeds 10 MiB',
        },
      ],
    });
    expect(await t.app.services.blobs.has(sha256(pdf))).toBe(false);
    expect(await storedRows(t, caller.tenantId)).toMatchObject({ tasks: 0, attachments: 0 });
  });

  it('refuses a file whose bytes do not match its type with the rule base64 data has', async () => {
    const caller = await t.caller(['member']);

    const answer = await send(uploadParts([{ file: PNG, mimeType: 'image/gif', filename: 'a.png' }]), caller);

    expect(answer.body.errors?.[0]?.extensions).toMatchObject({
      code: 'BAD_USER_INPUT',
      detail: [
        {
          type: 'value_error',
          loc: ['input', 'attachments', 0, 'file'],
          msg: 'Value error, file does not look like a GIF file (it looks like a PNG file)',
        },
      ],
    });
    expect(await storedRows(t, caller.tenantId)).toMatchObject({ tasks: 0, attachments: 0 });
  });

  it('refuses an attachment with both data and a file, and one with neither', async () => {
    const caller = await t.caller(['member']);
    const parts = uploadParts([{ file: PDF, mimeType: 'application/pdf' }]);
    const operations = JSON.parse((parts[0] as { value: string }).value);
    operations.variables.input.attachments.push({ mimeType: 'application/pdf' });
    operations.variables.input.attachments[0].data = PDF.toString('base64');
    (parts[0] as { value: string }).value = JSON.stringify(operations);

    const answer = await send(parts, caller);

    expect(answer.body.errors?.[0]?.extensions?.detail).toEqual([
      expect.objectContaining({
        loc: ['input', 'attachments', 0, 'file'],
        msg: 'Value error, send either data or file, not both',
      }),
      expect.objectContaining({
        loc: ['input', 'attachments', 1, 'data'],
        msg: 'Value error, data (base64) or file (a file part of a multipart request) is required',
      }),
    ]);
    expect(await storedRows(t, caller.tenantId)).toMatchObject({ tasks: 0, attachments: 0 });
  });

  it('takes no file from a request without a valid token', async () => {
    const answer = await send(uploadParts([{ file: PDF, mimeType: 'application/pdf' }]), null);

    expect(answer.status).toBe(401);
    expect(answer.body.errors?.[0]?.extensions?.code).toBe('UNAUTHENTICATED');
  });

  it('takes no file for an operation other than sendChatMessage', async () => {
    const answer = await send(
      uploadParts(
        [{ file: PDF, mimeType: 'application/pdf' }],
        'hi',
        'query Me($input: ChatMessageInput) { me { sub } }',
      ),
    );

    expect(answer.status).toBe(400);
    expect(answer.body.errors?.[0]).toMatchObject({
      message: 'Files may be sent only with sendChatMessage',
      extensions: { code: 'BAD_REQUEST' },
    });
  });

  it('refuses a file part that comes before operations and map', async () => {
    const parts = uploadParts([{ file: PDF, mimeType: 'application/pdf' }]);

    const answer = await send([parts[2] as Part, parts[0] as Part, parts[1] as Part]);

    expect(answer.status).toBe(400);
    expect(answer.body.errors?.[0]?.extensions?.code).toBe('BAD_REQUEST');
  });

  it('refuses a JSON value posing as a file and reads nothing from the disk', async () => {
    const caller = await t.caller(['member']);
    const response = await t.app.yoga.fetch('http://yoga/graphql', {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        accept: 'application/graphql-response+json',
        authorization: `Bearer ${caller.token}`,
      },
      body: JSON.stringify({
        query: SendWithAttachments,
        variables: {
          input: {
            message: 'hi',
            attachments: [
              {
                file: {
                  path: '/etc/hostname',
                  size: 5,
                  sha256: sha256(PDF),
                  head: [37, 80, 68, 70, 45],
                  complete: true,
                },
                mimeType: 'application/pdf',
              },
            ],
          },
        },
      }),
    });
    const body = (await response.json()) as Answer['body'];

    expect(body.data).toBeUndefined();
    expect(body.errors?.[0]?.message).toMatch(
      /^Variable "\$input" got invalid value .* at "input.attachments\[0\].file"; File takes a file part of a multipart request, not a JSON value$/,
    );
    expect(await storedRows(t, caller.tenantId)).toMatchObject({ tasks: 0, attachments: 0 });
  });

  it('still takes base64 data within the 1 MiB JSON body', async () => {
    const caller = await t.caller(['member']);
    const pdf = uniquePdf(100 * 1024);

    const result = await t.graphql(
      SendWithAttachments,
      {
        input: {
          message: 'inline',
          attachments: [{ data: pdf.toString('base64'), mimeType: 'application/pdf' }],
        },
      },
      caller,
    );

    expect(result.errors).toBeUndefined();
    expect((await t.app.services.blobs.get(sha256(pdf)))?.equals(pdf)).toBe(true);
  });
});
