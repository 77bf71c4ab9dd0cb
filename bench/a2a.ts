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
  /** Median time of one REST chat with an Idempotency-Key (the guarantee SendMessage's messageId gives). */
  keyedRestChatMedianMs: number;
  sendMessageMedianMs: number;
  /** Median over rounds of (SendMessage time / REST chat time). */
  sendRatio: number;
  /** Median over rounds of (SendMessage time / keyed REST chat time). */
  keyedSendRatio: number;
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
    const post = async (url: string, body: unknown, headers: Record<string, string> = {}) => {
      const response = await app.yoga.fetch(url, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${token}`, ...headers },
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
    const keyedRestChat = async () => {
      await post(
        'http://bench/api/v1/agents/cfo/chat',
        { message: 'Close the books' },
        { 'Idempotency-Key': randomUUID() },
      );
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
    const faces = [restChat, keyedRestChat, sendMessage];
    for (let index = 0; index < 30; index += 1) await faces[index % 3]?.();
    const times = new Map(faces.map((face) => [face, [] as number[]]));
    const sendRatios: number[] = [];
    const keyedSendRatios: number[] = [];
    for (let round = 0; round < rounds; round += 1) {
      // Each round starts with another face.
      const order = [...faces.slice(round % 3), ...faces.slice(0, round % 3)];
      const medians = new Map<() => Promise<void>, number>();
      for (const face of order) {
        const taken = await timed(face);
        times.get(face)?.push(...taken);
        medians.set(face, median(taken));
      }
      const send = medians.get(sendMessage) ?? Number.NaN;
      sendRatios.push(send / (medians.get(restChat) ?? Number.NaN));
      keyedSendRatios.push(send / (medians.get(keyedRestChat) ?? Number.NaN));
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
      restChatMedianMs: median(times.get(restChat) ?? []),
      keyedRestChatMedianMs: median(times.get(keyedRestChat) ?? []),
      sendMessageMedianMs: median(times.get(sendMessage) ?? []),
      sendRatio: median(sendRatios),
      keyedSendRatio: median(keyedSendRatios),
      replayMedianMs: median(replayTimes),
      getTaskMedianMs: median(readTimes),
      replayRatio: median(replayRatios),
    };
  });
}
