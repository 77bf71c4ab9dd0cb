// A2A SendMessage against the REST chat route it is a twin of, and a SendMessage replayed by its messageId
// against GetTask of the task it answered with (the read a client would make instead). The gateway is
// `npm start`'s server in a process of its own (NODE_ENV=production, PGlite), driven over loopback HTTP
// from this one, one request at a time, in interleaved rounds (the face that goes first rotates): each
// face's time per request as its client sees it, and the gateway process's CPU per request (all threads:
// the gateway and its database; 10 ms clock ticks over a round of 100).
import { randomUUID } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import { signToken } from '../src/auth/tokens.js';
import { median } from './measure.js';
import { cpuSeconds } from './processes.js';
import { jwtSecret, startGateway } from './servers.js';

export interface A2aFigures {
  rounds: number;
  callsPerRound: number;
  /** Median time of one REST chat, one keyed REST chat and one A2A SendMessage. */
  restChatMedianMs: number;
  /** The REST chat with an Idempotency-Key (the guarantee SendMessage's messageId gives). */
  keyedRestChatMedianMs: number;
  sendMessageMedianMs: number;
  /** Median over rounds of (SendMessage time / REST chat time), and against the keyed chat. */
  sendRatio: number;
  keyedSendRatio: number;
  /** Median over rounds of the gateway's CPU ms per request of each face. */
  restChatCpuMs: number;
  keyedRestChatCpuMs: number;
  sendMessageCpuMs: number;
  /** Median over rounds of (SendMessage CPU / REST chat CPU), and against the keyed chat. */
  sendCpuRatio: number;
  keyedSendCpuRatio: number;
  /** Median time of a SendMessage replayed by its messageId, and of GetTask of the task it answered with. */
  replayMedianMs: number;
  getTaskMedianMs: number;
  /** Median over rounds of (replay time / GetTask time), and of their CPU per request. */
  replayRatio: number;
  replayCpuRatio: number;
}

const TENANT = '8d6c1f0e-2b3a-4c5d-9e8f-7a6b5c4d3e2f';

/** A round of one face: its requests' times and the gateway's CPU ms per request. */
interface Round {
  times: number[];
  cpuMs: number;
}

export async function measureA2a(
  options: { runDir: string; postgresUrl: string },
  rounds: number,
  callsPerRound: number,
): Promise<A2aFigures> {
  const gateway = await startGateway({
    name: 'a2a-pglite',
    database: 'pglite',
    runDir: options.runDir,
    postgresUrl: options.postgresUrl,
  });
  try {
    const token = await signToken(jwtSecret, { tenantId: TENANT, sub: 'bench-member', roles: ['member'] });
    const post = async (route: string, body: unknown, headers: Record<string, string> = {}) => {
      const response = await fetch(`${gateway.url}${route}`, {
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
      post(`/a2a/${TENANT}/cfo`, { jsonrpc: '2.0', id: ++rpcId, method, params });
    const message = (messageId: string) => ({
      message: { messageId, role: 'ROLE_USER', parts: [{ text: 'Close the books' }] },
    });
    const restChat = async () => {
      await post('/api/v1/agents/cfo/chat', { message: 'Close the books' });
    };
    const keyedRestChat = async () => {
      await post(
        '/api/v1/agents/cfo/chat',
        { message: 'Close the books' },
        { 'Idempotency-Key': randomUUID() },
      );
    };
    const sendMessage = async () => {
      await rpc('SendMessage', message(randomUUID()));
    };
    const settle = () => new Promise((resolve) => setTimeout(resolve, 200));
    /** One round of a face; the events its requests wrote are relayed (and counted) before the CPU is read. */
    const timed = async (call: () => Promise<unknown>): Promise<Round> => {
      await settle();
      const cpuBefore = await cpuSeconds(gateway.pid);
      const times: number[] = [];
      for (let index = 0; index < callsPerRound; index += 1) {
        const started = performance.now();
        await call();
        times.push(performance.now() - started);
      }
      await settle();
      return { times, cpuMs: (((await cpuSeconds(gateway.pid)) - cpuBefore) * 1000) / callsPerRound };
    };
    const faces = [restChat, keyedRestChat, sendMessage];
    for (let index = 0; index < 30; index += 1) await faces[index % 3]?.();
    const taken = new Map(faces.map((face) => [face, [] as Round[]]));
    for (let round = 0; round < rounds; round += 1) {
      // Each round starts with another face.
      const order = [...faces.slice(round % 3), ...faces.slice(0, round % 3)];
      for (const face of order) taken.get(face)?.push(await timed(face));
    }
    const of = (face: () => Promise<void>) => taken.get(face) ?? [];
    const ratios = (a: Round[], b: Round[], pick: (round: Round) => number) =>
      median(a.map((round, index) => pick(round) / pick(b[index] as Round)));
    const time = (round: Round) => median(round.times);
    const cpu = (round: Round) => round.cpuMs;

    // One sent message, replayed and read again and again.
    const messageId = randomUUID();
    const sent = await rpc('SendMessage', message(messageId));
    const taskId = sent.result?.task?.id;
    const replay = () => rpc('SendMessage', message(messageId));
    const getTask = () => rpc('GetTask', { id: taskId });
    for (let index = 0; index < 20; index += 1) await (index % 2 ? replay() : getTask());
    const replays: Round[] = [];
    const reads: Round[] = [];
    for (let round = 0; round < rounds; round += 1) {
      if (round % 2 === 0) {
        reads.push(await timed(getTask));
        replays.push(await timed(replay));
      } else {
        replays.push(await timed(replay));
        reads.push(await timed(getTask));
      }
    }
    const allTimes = (face: Round[]) => median(face.flatMap((round) => round.times));
    return {
      rounds,
      callsPerRound,
      restChatMedianMs: allTimes(of(restChat)),
      keyedRestChatMedianMs: allTimes(of(keyedRestChat)),
      sendMessageMedianMs: allTimes(of(sendMessage)),
      sendRatio: ratios(of(sendMessage), of(restChat), time),
      keyedSendRatio: ratios(of(sendMessage), of(keyedRestChat), time),
      restChatCpuMs: median(of(restChat).map(cpu)),
      keyedRestChatCpuMs: median(of(keyedRestChat).map(cpu)),
      sendMessageCpuMs: median(of(sendMessage).map(cpu)),
      sendCpuRatio: ratios(of(sendMessage), of(restChat), cpu),
      keyedSendCpuRatio: ratios(of(sendMessage), of(keyedRestChat), cpu),
      replayMedianMs: allTimes(replays),
      getTaskMedianMs: allTimes(reads),
      replayRatio: ratios(replays, reads, time),
      replayCpuRatio: ratios(replays, reads, cpu),
    };
  } finally {
    await gateway.stop();
  }
}
