import { connect } from 'node:net';
import { describe, expect, it } from 'vitest';
import type { RunningServer } from '../../src/server.js';
import type { Caller, TestApp } from '../support/app.js';
import { serveTestAppAndCaller } from '../support/fixtures.js';

let t: TestApp;
let server: RunningServer;
let member: Caller;

serveTestAppAndCaller(['member'], async (made) => {
  ({ t, server, caller: member } = made);
  await t.app.services.tenants.ensure(member.tenantId);
});

/** Sends one request over a fresh connection and answers the raw bytes of the response. */
function exchange(request: string): Promise<string> {
  const { hostname, port } = new URL(server.url);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), hostname, () => socket.write(request));
    let answer = '';
    socket.setEncoding('latin1');
    socket.on('data', (chunk: string) => {
      answer += chunk;
    });
    socket.on('end', () => resolve(answer));
    socket.on('error', reject);
  });
}

/** The status line, the header names in order (values of the framing ones), and the one chunk of body. */
function framing(answer: string) {
  const [head = '', body = ''] = answer.split('\r\n\r\n', 2).length === 2 ? splitOnce(answer) : [answer, ''];
  const [statusLine, ...lines] = head.split('\r\n');
  const chunked = /^([0-9a-f]+)\r\n([\s\S]*)\r\n0\r\n\r\n$/.exec(body);
  return {
    statusLine,
    headers: lines.map((line) => {
      const [name = '', value = ''] = line.split(': ');
      return /^(content-type|transfer-encoding|www-authenticate|allow)$/i.test(name)
        ? `${name}: ${value}`
        : name;
    }),
    json:
      chunked && Number.parseInt(chunked[1] ?? '', 16) === chunked[2]?.length ? JSON.parse(chunked[2]) : body,
  };
}

function splitOnce(answer: string): [string, string] {
  const at = answer.indexOf('\r\n\r\n');
  return [answer.slice(0, at), answer.slice(at + 4)];
}

const request = (line: string, headers: string[] = [], body = '') =>
  `${line} HTTP/1.1\r\nHost: boardroom\r\n${headers.map((header) => `${header}\r\n`).join('')}${
    body ? `Content-Type: application/json\r\nContent-Length: ${body.length}\r\n` : ''
  }Connection: close\r\n\r\n${body}`;

/**
 * REST answers keep the bytes they have always had (the platform's `Response.json`): no reason phrase,
 * `content-type: application/json`, the headers in the platform's order, the body chunked without a
 * Content-Length.
 */
describe('the bytes of a REST answer', () => {
  const common = [
    'x-content-type-options',
    'x-request-id',
    'Date',
    'Connection',
    'Transfer-Encoding: chunked',
  ];

  it('of a success', async () => {
    const answer = framing(
      await exchange(request('GET /api/v1/agents/cfo/vitals', [`Authorization: Bearer ${member.token}`])),
    );

    expect(answer.statusLine).toBe('HTTP/1.1 200 ');
    expect(answer.headers).toEqual(['content-type: application/json', ...common]);
    expect(answer.json).toMatchObject({ data: { agent_role: 'cfo', tasks_completed: 0 } });
  });

  it('of a success with its own status (202)', async () => {
    const body = JSON.stringify({ message: 'hello', persist_thread: false });
    const answer = framing(
      await exchange(
        request('POST /api/v1/agents/cfo/chat', [`Authorization: Bearer ${member.token}`], body),
      ),
    );

    expect(answer.statusLine).toBe('HTTP/1.1 202 ');
    expect(answer.headers).toEqual(['content-type: application/json', ...common]);
    expect(answer.json).toMatchObject({ data: { agent_role: 'cfo', status: 'pending' } });
  });

  it('of an operation error (404) and an input refusal (422)', async () => {
    const missing = framing(
      await exchange(request('GET /api/v1/agents/nobody/vitals', [`Authorization: Bearer ${member.token}`])),
    );
    const refused = framing(
      await exchange(
        request('POST /api/v1/agents/cfo/chat', [`Authorization: Bearer ${member.token}`], '{}'),
      ),
    );

    expect(missing.statusLine).toBe('HTTP/1.1 404 ');
    expect(missing.headers).toEqual(['content-type: application/json', ...common]);
    expect(missing.json).toEqual({ detail: "Unknown agent role 'nobody'" });
    expect(refused.statusLine).toBe('HTTP/1.1 422 ');
    expect(refused.headers).toEqual(['content-type: application/json', ...common]);
    expect(refused.json).toEqual({
      detail: [{ type: 'missing', loc: ['body', 'message'], msg: 'Field required', input: {} }],
    });
  });

  it('of a refusal before the operation (401, 405)', async () => {
    const anonymous = framing(await exchange(request('GET /api/v1/agents/cfo/vitals')));
    const wrongMethod = framing(
      await exchange(request('DELETE /api/v1/agents/cfo/vitals', [`Authorization: Bearer ${member.token}`])),
    );

    expect(anonymous.statusLine).toBe('HTTP/1.1 401 ');
    expect(anonymous.headers).toEqual([
      'content-type: application/json',
      'www-authenticate: Bearer',
      ...common,
    ]);
    expect(anonymous.json).toEqual({ detail: 'Not authenticated' });
    expect(wrongMethod.statusLine).toBe('HTTP/1.1 405 ');
    expect(wrongMethod.headers).toEqual(['allow: GET', 'content-type: application/json', ...common]);
    expect(wrongMethod.json).toEqual({ detail: 'Method Not Allowed' });
  });
});
