import { randomUUID } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import { signToken } from '../src/auth/tokens.js';
import { BENCH_SECRET, withInProcessApp } from './in-process.js';
import { median } from './measure.js';

export interface A2aFigures {
  rounds: number;
  callsPerRound: number;
  /** Median time of one REST chat and one A2A SendMessage. */
  restChatMedianMs: number;
  sendMessageMedianMs: number;
  /** Median over rounds of (SendMessage time / REST chat time). */
  sendRatio: number;
  /** Median time of a SendMessage replayed by its messageId, and of GetTask of the task it answered with. */
  replayMedianMs: number;
  getTaskMedianMs: number;
  /** Median over rounds of (replay time / GetTask time). */
  replayRatio: number;
}

const TENANT = '8d6c1f0e-2b3a-4c5d-9e8f-7a6b5c4d3e2f';

/**
 * A2A SendMessage against the REST chat route it is a twin of, one request at a time, in interleaved rounds
 * (the face that goes first alternates); then a SendMessage replayed by its messageId against GetTask of
 * the task it answered with (the read a client would make instead). PGlite, in process, through yoga's fetch.
 */
export async function measureA2a(rounds: number, callsPerRound: number): Promise<A2aFigures> {
  return withInProcessApp('a2a', {}, async (app) => {
    const token = await signToken(BENCH_SECRET, { tenantId: TENANT, sub: 'bench-member', roles: ['member'] });
    const post = async (url: string, body: unknown) => {
      const response = await app.yoga.fetch(url, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
        body: JSON.stringify(body),
      });
      const answer = (await response.json()) as { error?: unknown; result?: { task?: { id: string } } };
      if (!response.ok || answer.error) throw new Error(JSON.stringify(answer));
      return answer;
    };
    let rpcId = 0;
    const rpc = (method: string, params: unknown) =>
      post(`http://bench/a2a/${TENANT}/cfo`, { jsonrpc: '2.0', id: ++rpcId, method, params });
    const message = (messageId: string) => ({
      message: { messageId, role: 'ROLE_USER', parts: [{ text: 'Close the books' }] },
    });
    const restChat = async () => {
      await post('http://bench/api/v1/agents/cfo/chat', { message: 'Close the books' });
    };
    const sendMessage = async () => {
      await rpc('SendMessage', message(randomUUID()));
    };
    const timed = async (call: () => Promise<unknown>) => {
      const times: number[] = [];
      for (let index = 0; index < callsPerRound; index += 1) {
        const started = performance.now();
        await call();
        times.push(performance.now() - started);
      }
      return times;
    };
    for (let index = 0; index < 20; index += 1) await (index % 2 ? sendMessage() : restChat());
    const restTimes: number[] = [];
    const sendTimes: number[] = [];
    const sendRatios: number[] = [];
    for (let round = 0; round < rounds; round += 1) {
      const first = round % 2 === 0 ? restChat : sendMessage;
      const a = await timed(first);
      const b = await timed(first === restChat ? sendMessage : restChat);
      const [r, s] = first === restChat ? [a, b] : [b, a];
      restTimes.push(...r);
      sendTimes.push(...s);
      sendRatios.push(median(s) / median(r));
    }
    // One sent message, replayed and read again and again.
    const messageId = randomUUID();
    const sent = await rpc('SendMessage', message(messageId));
    const taskId = sent.result?.task?.id;
    const replay = () => rpc('SendMessage', message(messageId));
    const getTask = () => rpc('GetTask', { id: taskId });
    for (let index = 0; index < 20; index += 1) await (index % 2 ? replay() : getTask());
    const replayTimes: number[] = [];
    const readTimes: number[] = [];
    const replayRatios: number[] = [];
    for (let round = 0; round < rounds; round += 1) {
      const first = round % 2 === 0 ? getTask : replay;
      const a = await timed(first);
      const b = await timed(first === getTask ? replay : getTask);
      const [g, p] = first === getTask ? [a, b] : [b, a];
      readTimes.push(...g);
      replayTimes.push(...p);
      replayRatios.push(median(p) / median(g));
    }
    return {
      rounds,
      callsPerRound,
      restChatMedianMs: median(restTimes),
      sendMessageMedianMs: median(sendTimes),
      sendRatio: median(sendRatios),
      replayMedianMs: median(replayTimes),
      getTaskMedianMs: median(readTimes),
      replayRatio: median(replayRatios),
    };
  });
}
