import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MAX_ATTACHMENT_BYTES } from '../../src/domain/agents/attachments.js';
import { GIF87A, JPEG, PDF, PNG, WEBP } from '../domain/agents/attachment-samples.js';
import { chat, filesUnder, storedRows } from '../schema/agents-support.js';
import { type Caller, createTestApp, type TestApp } from '../support/app.js';

const b64 = (bytes: Buffer) => bytes.toString('base64');
const png = (extra: Record<string, unknown> = {}) => ({ data: b64(PNG), mime_type: 'image/png', ...extra });

let t: TestApp;
let caller: Caller;

beforeAll(async () => {
  t = await createTestApp();
  caller = await t.caller(['member']);
});
afterAll(() => t.close());

/** `loc`, `type` and `msg` of each 422 item: what a client branches on. */
const issues = (body: { detail: { loc: unknown[]; type: string; msg: string }[] }) =>
  body.detail.map(({ loc, type, msg }) => ({ loc, type, msg }));

async function refused(role: string, body: unknown) {
  const response = await chat(t, caller, role, body);
  expect(response.status).toBe(422);
  return response.body;
}

describe('POST /api/v1/agents/{role}/chat answers 422', () => {
  it('for a missing body', async () => {
    const response = await t.rest('POST', '/api/v1/agents/ceo/chat', { caller });

    expect(response.status).toBe(422);
    expect(response.body).toMatchInlineSnapshot(`
      {
        "detail": [
          {
            "input": null,
            "loc": [
              "body",
            ],
            "msg": "Field required",
            "type": "missing",
          },
        ],
      }
    `);
  });

  it('for a body that is not JSON', async () => {
    expect(await refused('ceo', '{"message": ')).toMatchInlineSnapshot(`
      {
        "detail": [
          {
            "ctx": {
              "error": "Unexpected end of JSON input",
            },
            "input": {},
            "loc": [
              "body",
              0,
            ],
            "msg": "JSON decode error",
            "type": "json_invalid",
          },
        ],
      }
    `);
  });

  it('for a long attachment holding a raw line break, as JSON.parse words it, writing nothing', async () => {
    const data = b64(Buffer.concat([PDF, Buffer.alloc(100_000)]));
    const text = `{"message": "hi", "attachments": [{"data": "${data.slice(0, 70_000)}\n${data.slice(70_000)}", "mime_type": "application/pdf"}]}`;
    const error = (() => {
      try {
        JSON.parse(text);
      } catch (thrown) {
        return (thrown as Error).message;
      }
    })();
    const files = (await filesUnder(t.dataDir)).length;
    const rows = await storedRows(t, caller.tenantId);

    const body = await refused('ceo', text);

    expect(error).toMatch(/position 70044/);
    expect(body).toStrictEqual({
      detail: [
        { type: 'json_invalid', loc: ['body', 70044], msg: 'JSON decode error', input: {}, ctx: { error } },
      ],
    });
    expect((await filesUnder(t.dataDir)).length).toBe(files);
    expect(await storedRows(t, caller.tenantId)).toStrictEqual(rows);
  });

  it('for a body that is not an object', async () => {
    expect(await refused('ceo', ['hello'])).toMatchInlineSnapshot(`
      {
        "detail": [
          {
            "input": [
              "hello",
            ],
            "loc": [
              "body",
            ],
            "msg": "Input should be a valid dictionary or object to extract fields from",
            "type": "model_attributes_type",
          },
        ],
      }
    `);
  });

  it('for a missing message', async () => {
    expect(await refused('ceo', { attachments: [] })).toMatchInlineSnapshot(`
      {
        "detail": [
          {
            "input": {
              "attachments": [],
            },
            "loc": [
              "body",
              "message",
            ],
            "msg": "Field required",
            "type": "missing",
          },
        ],
      }
    `);
  });

  it('for a message that is not a string', async () => {
    expect(await refused('ceo', { message: 42 })).toMatchInlineSnapshot(`
      {
        "detail": [
          {
            "input": 42,
            "loc": [
              "body",
              "message",
            ],
            "msg": "Input should be a valid string",
            "type": "string_type",
          },
        ],
      }
    `);
  });

  it('for an empty message', async () => {
    expect(await refused('ceo', { message: '' })).toMatchInlineSnapshot(`
      {
        "detail": [
          {
            "ctx": {
              "min_length": 1,
            },
            "input": "",
            "loc": [
              "body",
              "message",
            ],
            "msg": "String should have at least 1 character",
            "type": "string_too_short",
          },
        ],
      }
    `);
  });

  it('for a message of 4097 characters', async () => {
    const body = await refused('ceo', { message: 'x'.repeat(4097) });

    expect(body.detail[0].input).toBe('x'.repeat(4097));
    expect(issues(body)).toMatchInlineSnapshot(`
      [
        {
          "loc": [
            "body",
            "message",
          ],
          "msg": "String should have at most 4096 characters",
          "type": "string_too_long",
        },
      ]
    `);
    expect(body.detail[0].ctx).toEqual({ max_length: 4096 });
  });

  it('for six attachments', async () => {
    const body = await refused('ceo', { message: 'hi', attachments: Array.from({ length: 6 }, () => png()) });

    expect(issues(body)).toMatchInlineSnapshot(`
      [
        {
          "loc": [
            "body",
            "attachments",
          ],
          "msg": "List should have at most 5 items after validation, not 6",
          "type": "too_long",
        },
      ]
    `);
    expect(body.detail[0].ctx).toEqual({ field_type: 'List', max_length: 5, actual_length: 6 });
  });

  it('for attachments that are not a list', async () => {
    expect(await refused('ceo', { message: 'hi', attachments: png() })).toMatchInlineSnapshot(`
      {
        "detail": [
          {
            "input": {
              "data": "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAIAAACQd1PeAAAADElEQVR4nGP4z8AAAAMBAQDJ/pLvAAAAAElFTkSuQmCC",
              "mime_type": "image/png",
            },
            "loc": [
              "body",
              "attachments",
            ],
            "msg": "Input should be a valid list",
            "type": "list_type",
          },
        ],
      }
    `);
  });

  it('for an attachment without data and mime_type', async () => {
    expect(
      issues(await refused('ceo', { message: 'hi', attachments: [{ filename: 'a.png' }] })),
    ).toMatchInlineSnapshot(`
      [
        {
          "loc": [
            "body",
            "attachments",
            0,
            "data",
          ],
          "msg": "Field required",
          "type": "missing",
        },
        {
          "loc": [
            "body",
            "attachments",
            0,
            "mime_type",
          ],
          "msg": "Field required",
          "type": "missing",
        },
      ]
    `);
  });

  it('for a MIME type that is not an image or a PDF', async () => {
    const body = await refused('ceo', {
      message: 'hi',
      attachments: [{ data: b64(Buffer.from('plain text')), mime_type: 'text/plain' }],
    });

    expect(body).toMatchInlineSnapshot(`
      {
        "detail": [
          {
            "ctx": {
              "error": "mime_type must be one of image/png, image/jpeg, image/gif, image/webp, application/pdf",
            },
            "input": "text/plain",
            "loc": [
              "body",
              "attachments",
              0,
              "mime_type",
            ],
            "msg": "Value error, mime_type must be one of image/png, image/jpeg, image/gif, image/webp, application/pdf",
            "type": "value_error",
          },
        ],
      }
    `);
  });

  it('at the index of the attachment that fails', async () => {
    const body = await refused('ceo', {
      message: 'hi',
      attachments: [png(), png({ mime_type: 'image/jpeg' })],
    });

    expect(issues(body)).toMatchInlineSnapshot(`
      [
        {
          "loc": [
            "body",
            "attachments",
            1,
            "data",
          ],
          "msg": "Value error, data does not look like a JPEG file (it looks like a PNG file)",
          "type": "value_error",
        },
      ]
    `);
  });

  it.each([
    { rule: 'a data: URL prefix', data: `data:image/gif;base64,${b64(GIF87A)}` },
    { rule: 'line breaks', data: b64(GIF87A).replace(/(.{16})/g, '$1\n') },
    { rule: 'the base64url alphabet', data: b64(JPEG).replace(/\+/g, '-').replace(/\//g, '_') },
    { rule: 'missing padding', data: b64(GIF87A).replace(/=+$/, '') },
    { rule: 'non-zero padding bits', data: b64(GIF87A).replace(/w==$/, 'x==') },
    { rule: 'an empty string', data: '' },
  ])('for data with $rule', async ({ data }) => {
    const body = await refused('ceo', { message: 'hi', attachments: [{ data, mime_type: 'image/gif' }] });

    expect(body.detail).toHaveLength(1);
    expect(body.detail[0]).toMatchObject({ type: 'value_error', loc: ['body', 'attachments', 0, 'data'] });
    expect(body.detail[0].msg).toMatch(/^Value error, data /);
  });

  it('for data whose bytes are not of the stated type', async () => {
    const body = await refused('ceo', {
      message: 'hi',
      attachments: [{ data: b64(PDF), mime_type: 'image/webp' }],
    });

    expect(issues(body)).toMatchInlineSnapshot(`
      [
        {
          "loc": [
            "body",
            "attachments",
            0,
            "data",
          ],
          "msg": "Value error, data does not look like a WebP file (it looks like a PDF file)",
          "type": "value_error",
        },
      ]
    `);
  });

  it('for data over 10 MiB decoded, echoing only the start of the input', async () => {
    const oversized = Buffer.concat([WEBP, Buffer.alloc(MAX_ATTACHMENT_BYTES + 1 - WEBP.length)]);

    const body = await refused('ceo', {
      message: 'hi',
      attachments: [{ data: b64(oversized), mime_type: 'image/webp' }],
    });

    expect(body).toMatchInlineSnapshot(`
      {
        "detail": [
          {
            "ctx": {
              "error": "attachment exceeds 10 MiB after decoding",
            },
            "input": "UklGRhwAAABXRUJQVlA4TA8AAAAvAAAAAAcQ/Y/+ByKi/wEAAAAAAAAAAAAAAAAA…",
            "loc": [
              "body",
              "attachments",
              0,
              "data",
            ],
            "msg": "Value error, attachment exceeds 10 MiB after decoding",
            "type": "value_error",
          },
        ],
      }
    `);
  });

  it('accepts data of exactly 10 MiB decoded', async () => {
    const largest = Buffer.concat([PDF, Buffer.alloc(MAX_ATTACHMENT_BYTES - PDF.length)]);

    const response = await chat(t, caller, 'ceo', {
      message: 'hi',
      attachments: [{ data: b64(largest), mime_type: 'application/pdf' }],
    });

    expect(response.status).toBe(202);
  });

  it.each([
    { rule: 'a path separator', filename: '../etc/passwd.png' },
    { rule: 'a backslash', filename: 'C:\\temp\\a.png' },
    { rule: 'a control character', filename: 'a\u0000.png' },
    { rule: 'a bidirectional override', filename: 'invoice\u202Egnp.exe' },
    { rule: 'an executable extension', filename: 'setup.exe' },
    { rule: 'a doubled executable extension', filename: 'report.pdf.exe' },
    { rule: 'a script extension', filename: 'run.sh' },
    { rule: 'more than 255 characters', filename: `${'a'.repeat(252)}.png` },
    { rule: 'only dots', filename: '..' },
  ])('for a filename with $rule', async ({ filename }) => {
    const body = await refused('ceo', { message: 'hi', attachments: [png({ filename })] });

    expect(body.detail).toHaveLength(1);
    expect(body.detail[0]).toMatchObject({
      type: 'value_error',
      loc: ['body', 'attachments', 0, 'filename'],
      input: filename,
    });
  });

  it('for a filename that is not a string', async () => {
    expect(
      issues(await refused('ceo', { message: 'hi', attachments: [png({ filename: 7 })] })),
    ).toMatchInlineSnapshot(`
      [
        {
          "loc": [
            "body",
            "attachments",
            0,
            "filename",
          ],
          "msg": "Input should be a valid string",
          "type": "string_type",
        },
      ]
    `);
  });

  it('for a thread_id that is not a uuid', async () => {
    expect(await refused('ceo', { message: 'hi', thread_id: 'thread-1' })).toMatchInlineSnapshot(`
      {
        "detail": [
          {
            "input": "thread-1",
            "loc": [
              "body",
              "thread_id",
            ],
            "msg": "Input should be a valid UUID, invalid character: expected an optional prefix of \`urn:uuid:\` followed by [0-9a-fA-F-], found \`t\` at 1",
            "type": "uuid_parsing",
          },
        ],
      }
    `);
  });

  it('for a persist_thread that is not a boolean', async () => {
    expect(
      issues(await refused('ceo', { message: 'hi', persist_thread: 'sometimes' })),
    ).toMatchInlineSnapshot(`
      [
        {
          "loc": [
            "body",
            "persist_thread",
          ],
          "msg": "Input should be a valid boolean, unable to interpret input",
          "type": "bool_parsing",
        },
      ]
    `);
  });

  it('for a path role longer than 64 characters', async () => {
    expect(issues(await refused('r'.repeat(65), { message: 'hi' }))).toMatchInlineSnapshot(`
      [
        {
          "loc": [
            "path",
            "role",
          ],
          "msg": "String should have at most 64 characters",
          "type": "string_too_long",
        },
      ]
    `);
  });

  it('for a path role with characters no role has', async () => {
    expect(await refused('c%20eo', { message: 'hi' })).toMatchInlineSnapshot(`
      {
        "detail": [
          {
            "ctx": {
              "pattern": "^[A-Za-z][A-Za-z0-9_-]*$",
            },
            "input": "c eo",
            "loc": [
              "path",
              "role",
            ],
            "msg": "String should match pattern '^[A-Za-z][A-Za-z0-9_-]*$'",
            "type": "string_pattern_mismatch",
          },
        ],
      }
    `);
  });

  it('with every problem of the request at once', async () => {
    const body = await refused('ceo', {
      message: '',
      thread_id: 'x',
      attachments: [png({ mime_type: 'application/pdf', filename: 'a.exe' })],
    });

    expect(issues(body).map((issue) => [issue.loc.join('.'), issue.type])).toMatchInlineSnapshot(`
      [
        [
          "body.message",
          "string_too_short",
        ],
        [
          "body.attachments.0.data",
          "value_error",
        ],
        [
          "body.attachments.0.filename",
          "value_error",
        ],
        [
          "body.thread_id",
          "uuid_parsing",
        ],
      ]
    `);
  });
});

describe('after a 422', () => {
  it('stores no task, no thread and no file', async () => {
    const fresh = await t.caller(['member']);
    const filesBefore = await filesUnder(t.dataDir);
    const unique = Buffer.concat([PDF, Buffer.from('% only in the refused request\n')]);

    const response = await chat(t, fresh, 'ceo', {
      message: 'hi',
      attachments: [{ data: b64(unique), mime_type: 'application/pdf' }, png({ filename: 'x.js' })],
    });

    expect(response.status).toBe(422);
    expect(await storedRows(t, fresh.tenantId)).toEqual({
      tasks: 0,
      threads: 0,
      messages: 0,
      attachments: 0,
      outbox: 0,
    });
    expect(await filesUnder(t.dataDir)).toEqual(filesBefore);
  });
});
