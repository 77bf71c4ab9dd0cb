import {
  IncomingMessage,
  type OutgoingHttpHeader,
  type OutgoingHttpHeaders,
  ServerResponse,
} from 'node:http';
import type { Socket } from 'node:net';

/**
 * Lingering close, as nginx does it: an answer written while the request's body is still arriving (a 413 for
 * a body over its limit, a 401, 403 or 429 given before the body is read) says `Connection: close`, and once
 * it is written the server half-closes the connection and reads and drops what the client still sends, for
 * a bounded time and number of bytes, before it closes. Closing at once would leave the client's bytes unread,
 * and a close with unread data resets the connection: a client still sending then gets EPIPE or ECONNRESET
 * instead of the answer. Reading on without a bound would let any client make the server read gigabytes.
 */
export interface LingerBounds {
  /** Longest time a connection is held once such an answer is written (HTTP_LINGER_MS). */
  timeoutMs: number;
  /** Most bytes read and dropped after such an answer (HTTP_LINGER_BYTES); past them reading stops. */
  maxBytes: number;
}

/** Whether part of `request`'s body has not arrived yet. */
function bodyStillArriving(request: IncomingMessage): boolean {
  if (request.complete) return false;
  const { headers } = request;
  return headers['transfer-encoding'] !== undefined || Number(headers['content-length'] ?? 0) > 0;
}

/**
 * A request whose body a reader gives up (a limit passed, a parser's refusal) is destroyed by that reader;
 * IncomingMessage's own `_destroy` then destroys the connection, before the answer is written or read. This
 * one ends the body stream alone: the connection stays for the answer, which closes it (LingeringResponse).
 */
export class BodyRequest extends IncomingMessage {
  override _destroy(error: Error | null, callback: (error?: Error | null) => void): void {
    // As IncomingMessage's, but for the socket: a body cut short is aborted, and the error is passed on
    // only to a stream that listens for errors.
    if (!this.readableEnded || !this.complete) {
      this.aborted = true;
      this.emit('aborted');
    }
    process.nextTick(() => callback(this.listenerCount('error') > 0 ? error : null));
  }
}

/**
 * node:http's response with the lingering close: `Connection: close` when the request's body is still
 * arriving as the answer starts, then, once it is written, a half-close and at most the allowed bytes read
 * and dropped within `timeoutMs`. node:http closes a `Connection: close` connection with `destroySoon`
 * once the answer is written; that call is this response's lingering close for its connection.
 */
export abstract class LingeringResponse extends ServerResponse<IncomingMessage> {
  protected abstract readonly bounds: LingerBounds;
  /** Bytes this request's connection may drop after the answer: none until the body limit decides them. */
  private allowance = 0;
  private lingering = false;
  private letGo = false;
  private readonly whenLetGo: (() => void)[] = [];
  /** The request's connection (a reader that gives up on the body may take it off the request). */
  private readonly requestSocket: Socket;

  // node:http passes options (highWaterMark) beside the request.
  constructor(...args: ConstructorParameters<typeof ServerResponse<IncomingMessage>>) {
    super(...args);
    this.requestSocket = this.req.socket;
    // Not lingering: the connection is let go of with the answer ('close' comes after 'finish', or alone
    // when the client went away first).
    this.once('close', () => {
      if (!this.lingering || this.requestSocket.destroyed) this.release();
    });
  }

  /** Allows `bytes` (at most HTTP_LINGER_BYTES) to be dropped after the answer. */
  allowDropping(bytes: number): void {
    this.allowance = Math.min(bytes, this.bounds.maxBytes);
  }

  /** Runs `callback` once the connection is no longer held for this request (at once if it is not). */
  onceLetGo(callback: () => void): void {
    if (this.letGo) callback();
    else this.whenLetGo.push(callback);
  }

  // Every way to start an answer passes here (an implicit header too).
  override writeHead(
    statusCode: number,
    statusMessage?: string | OutgoingHttpHeaders | OutgoingHttpHeader[],
    headers?: OutgoingHttpHeaders | OutgoingHttpHeader[],
  ): this {
    if (!this.headersSent && !this.lingering && bodyStillArriving(this.req)) this.closeLingering();
    return typeof statusMessage === 'string'
      ? super.writeHead(statusCode, statusMessage, headers)
      : super.writeHead(statusCode, statusMessage);
  }

  private closeLingering(): void {
    this.lingering = true;
    // node:http writes `Connection: close` and calls destroySoon once the answer is written.
    this.shouldKeepAlive = false;
    const socket = this.requestSocket;
    socket.destroySoon = () => this.linger(socket);
  }

  private linger(socket: Socket): void {
    const allowance = this.allowance;
    let dropped = 0;
    const close = () => socket.destroy();
    const timer = setTimeout(close, this.bounds.timeoutMs);
    socket.once('close', () => {
      clearTimeout(timer);
      this.release();
    });
    // What still arrives is counted and dropped here; node:http's parser no longer sees it (a listener of
    // 'data' takes the socket from the native parser; the server's own listener would feed it).
    const drop = (chunk: Buffer) => {
      dropped += chunk.byteLength;
      if (dropped >= allowance) socket.pause();
    };
    socket.on('data', drop);
    for (const listener of socket.listeners('data')) {
      if (listener !== drop) socket.removeListener('data', listener as (chunk: Buffer) => void);
    }
    // The client stopped sending: everything it sent was read, so the close is a FIN, not a reset.
    socket.once('end', close);
    socket.end();
    if (allowance > 0) readAgain(socket);
    else socket.pause();
  }

  private release(): void {
    if (this.letGo) return;
    this.letGo = true;
    for (const callback of this.whenLetGo.splice(0)) callback();
  }
}

/**
 * Starts reading `socket` again once node:http's parser no longer reads it: the parser stops and starts the
 * reads of the socket's handle itself (it consumes the handle natively), so a read it stopped (a body that
 * nobody read, held back) is not restarted by `resume()`, which sees the stream as flowing already.
 */
function readAgain(socket: Socket): void {
  socket.resume();
  const handle = (socket as unknown as { _handle?: { reading: boolean; readStart(): number } })._handle;
  if (handle && !handle.reading) {
    handle.reading = true;
    handle.readStart();
  }
}

/** The response class of a server with these bounds. */
export function lingeringResponses(bounds: LingerBounds): typeof ServerResponse<IncomingMessage> {
  return class extends LingeringResponse {
    protected readonly bounds = bounds;
  } as unknown as typeof ServerResponse<IncomingMessage>;
}

const responseOf = (serverContext: unknown) => {
  const response = (serverContext as { res?: unknown } | undefined)?.res;
  return response instanceof LingeringResponse ? response : undefined;
};

/**
 * Allows a request's connection to drop `bytes` of its body after an answer written before all of it arrived
 * (at most HTTP_LINGER_BYTES). A request gets none until this is called: after an answer given before its
 * body limit is decided (a 429) the connection stops being read and is held within HTTP_LINGER_MS.
 */
export function allowDropping(serverContext: unknown, bytes: number): void {
  responseOf(serverContext)?.allowDropping(bytes);
}

/**
 * Runs `callback` once the request's connection is no longer held for it: when the answer is written, or
 * after its lingering close. At once outside node:http (`yoga.fetch`).
 */
export function onceConnectionLetGo(serverContext: unknown, callback: () => void): void {
  const response = responseOf(serverContext);
  if (response) response.onceLetGo(callback);
  else callback();
}
