import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/** One request the model server received: its parsed Chat Completions body. */
export interface ModelRequest {
  body: any;
  authorization: string | undefined;
}

type Answer = (request: ModelRequest, response: ServerResponse) => void;

/**
 * An OpenAI-compatible Chat Completions server on loopback (`POST /v1/chat/completions`), answering each
 * request with the next scripted answer.
 */
export async function startModelServer(answers: Answer[]) {
  const received: ModelRequest[] = [];
  const server = createServer((request: IncomingMessage, response) => {
    let text = '';
    request.setEncoding('utf8');
    request.on('data', (chunk) => {
      text += chunk;
    });
    request.on('end', () => {
      if (request.method !== 'POST' || request.url !== '/v1/chat/completions') {
        response.writeHead(404).end();
        return;
      }
      const modelRequest = { body: JSON.parse(text), authorization: request.headers.authorization };
      received.push(modelRequest);
      const answer = answers.shift();
      if (!answer) {
        response
          .writeHead(500, { 'content-type': 'application/json' })
          .end('{"error":{"message":"no answer"}}');
        return;
      }
      answer(modelRequest, response);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    baseURL: `http://127.0.0.1:${port}/v1`,
    received,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** A Chat Completions JSON answer. */
export const completion =
  (message: Record<string, unknown>, usage?: Record<string, unknown>): Answer =>
  (request, response) => {
    response.writeHead(200, { 'content-type': 'application/json' }).end(
      JSON.stringify({
        id: `chatcmpl-${received()}`,
        object: 'chat.completion',
        created: Math.floor(Date.now() / 1000),
        model: request.body.model,
        choices: [
          {
            index: 0,
            message: { role: 'assistant', content: null, refusal: null, ...message },
            finish_reason: message.tool_calls ? 'tool_calls' : 'stop',
            logprobs: null,
          },
        ],
        ...(usage ? { usage } : {}),
      }),
    );
  };

let counter = 0;
const received = () => {
  counter += 1;
  return counter;
};

/** An error answer with the given status. */
export const failure =
  (status: number, message: string): Answer =>
  (_request, response) => {
    response
      .writeHead(status, { 'content-type': 'application/json' })
      .end(JSON.stringify({ error: { message, type: 'server_error', code: null } }));
  };

/** Never answers (until the server closes): a model still thinking. */
export const hang: Answer = () => {};
