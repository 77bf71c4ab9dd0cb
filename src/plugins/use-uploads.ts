import { createHash, randomUUID } from 'node:crypto';
import { createWriteStream } from 'node:fs';
import { mkdir, rm } from 'node:fs/promises';
import path from 'node:path';
import { Readable, Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { Busboy, type BusboyFileStream, type BusboyInstance } from '@fastify/busboy';
import type { GraphQLParams, Plugin } from 'graphql-yoga';
import { authenticationOf } from '../auth/request.js';
import {
  MAX_ATTACHMENT_BYTES,
  MAX_ATTACHMENTS_PER_MESSAGE,
  ReceivedFile,
  SIGNATURE_BYTES,
} from '../domain/agents/attachments.js';
import { badRequest, unauthenticated } from '../domain/errors.js';
import { graphQLErrorOf, serviceError } from '../errors.js';
import { MAX_BODY_BYTES } from '../http/body.js';
import { requestStateOf } from '../http/request-context.js';
import { operationOf, parseWithinLimits, rootFieldNamesOf } from '../validation/document-limits.js';

export interface UseUploadsOptions {
  /** Directory of the spool files, created when first needed. No default: `DATA_DIR/uploads`. */
  directory: string;
  /** Root fields of the operations that take files. Default: none (every file part is refused). */
  fields?: readonly string[];
  /**
   * Bytes of one file kept; a longer part is read to its end and dropped, and its field's rules refuse it.
   * Default 10 MiB (MAX_ATTACHMENT_BYTES).
   */
  maxFileBytes?: number;
  /** File parts one request may carry. Default 5 (MAX_ATTACHMENTS_PER_MESSAGE). */
  maxFiles?: number;
  /** Largest `operations` and `map` field. Default 1 MiB (MAX_BODY_BYTES), as a JSON body. */
  maxFieldBytes?: number;
}

const GRAPHQL_PATH = '/graphql';
const UNSAFE_KEYS = new Set(['__proto__', 'constructor', 'prototype']);

/** A refusal of the multipart request itself (400), answered at once; the rest of the body is not read. */
const malformed = (message: string) => graphQLErrorOf(badRequest(`Invalid multipart request: ${message}`));

function isMultipart(request: Request): boolean {
  return (
    request.method === 'POST' &&
    (request.headers.get('content-type') ?? '').toLowerCase().startsWith('multipart/form-data')
  );
}

/** Parses `map`: file part name → paths of the operation's variables it fills. */
function parseMap(text: string, maxFiles: number): Map<string, string[][]> {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw malformed('map is not JSON');
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value))
    throw malformed('map is not an object');
  const entries = Object.entries(value);
  if (entries.length > maxFiles) {
    throw serviceError('PAYLOAD_TOO_LARGE', `At most ${maxFiles} files may be sent at once`);
  }
  const map = new Map<string, string[][]>();
  for (const [name, paths] of entries) {
    if (!Array.isArray(paths) || paths.length === 0 || paths.length > 10) {
      throw malformed(`map of ${name} is not a list of paths`);
    }
    map.set(
      name,
      paths.map((entry) => {
        const segments = typeof entry === 'string' ? entry.split('.') : [];
        if (
          segments[0] !== 'variables' ||
          segments.length < 2 ||
          segments.some((key) => UNSAFE_KEYS.has(key))
        ) {
          throw malformed(`map path ${JSON.stringify(entry)} does not name a variable`);
        }
        return segments.slice(1);
      }),
    );
  }
  return map;
}

/** Puts `file` where `segments` point in `variables` (each `null` there in the operation, by the spec). */
function place(variables: Record<string, unknown>, segments: string[], file: ReceivedFile): void {
  let container: unknown = variables;
  for (const key of segments.slice(0, -1)) {
    container =
      container !== null && typeof container === 'object'
        ? (container as Record<string, unknown>)[key]
        : undefined;
  }
  const last = segments.at(-1) as string;
  if (container === null || typeof container !== 'object' || !Object.hasOwn(container, last)) {
    throw malformed(`map path variables.${segments.join('.')} names nothing in the variables`);
  }
  (container as Record<string, unknown>)[last] = file;
}

/**
 * Whether files may come with `operations`: only when every root field of its operation takes them. Decided
 * before any file part is read, from the document parsed within the document limits.
 */
function takesFiles(operations: Record<string, unknown>, fields: readonly string[]): boolean {
  if (typeof operations.query !== 'string') return false;
  try {
    const document = parseWithinLimits(operations.query);
    const operation = operationOf(document, operations.operationName as string | undefined);
    if (operation?.operation !== 'mutation') return false;
    return [...rootFieldNamesOf(document, operation)].every((field) => fields.includes(field));
  } catch {
    return false;
  }
}

/**
 * GraphQL multipart requests (https://github.com/jaydenseric/graphql-multipart-request-spec) on /graphql,
 * in place of yoga's own parser, which holds every file in memory. Only a verified caller may send one (401
 * otherwise, before the body is read). The parts must come in the spec's order: `operations` and `map`
 * (each at most 1 MiB), then the files, and files only for an operation whose root fields all take them
 * (`fields`), decided before the first file is read (400 otherwise). Each file is written to a spool file as
 * it arrives, hashed and counted on the way; the operation receives it as a `ReceivedFile` (the `File`
 * scalar), which the attachment rules check like base64 data, and the blob store copies. Spool files are
 * removed once the request is answered. The body's total size is useBodyLimit's: it runs after this plugin.
 */
export function useUploads({
  directory,
  fields = [],
  maxFileBytes = MAX_ATTACHMENT_BYTES,
  maxFiles = MAX_ATTACHMENTS_PER_MESSAGE,
  maxFieldBytes = MAX_BODY_BYTES,
}: UseUploadsOptions): Plugin {
  /** Writes one file part to a spool file: its size, digest and first bytes, read as it streams through. */
  async function spool(stream: BusboyFileStream, paths: string[]): Promise<ReceivedFile> {
    await mkdir(directory, { recursive: true });
    const file = path.join(directory, `${randomUUID()}.part`);
    paths.push(file);
    const hash = createHash('sha256');
    let size = 0;
    let head = Buffer.alloc(0);
    try {
      await pipeline(
        stream,
        new Transform({
          transform(chunk: Buffer, _encoding, done) {
            size += chunk.byteLength;
            hash.update(chunk);
            if (head.byteLength < SIGNATURE_BYTES)
              head = Buffer.concat([head, chunk.subarray(0, SIGNATURE_BYTES)]);
            done(null, chunk);
          },
        }),
        createWriteStream(file, { flags: 'wx', mode: 0o644 }),
      );
    } catch (error) {
      // A request that failed mid-file: its spool file may be opened after the request's clean-up ran.
      await rm(file, { force: true }).catch(() => {});
      throw error;
    }
    // A part over the limit was cut by the parser at maxFileBytes + 1: enough to know it is too large.
    return new ReceivedFile(file, size, hash.digest('hex'), head.subarray(0, SIGNATURE_BYTES));
  }

  function parse(request: Request, serverContext: object): Promise<GraphQLParams> {
    const outcome = authenticationOf(serverContext);
    if (outcome?.status !== 'verified') {
      throw graphQLErrorOf(
        outcome?.status === 'failed' ? unauthenticated(outcome.error.message) : unauthenticated(),
      );
    }
    const body = request.body;
    if (!body) throw malformed('no body');
    const paths: string[] = [];
    requestStateOf(serverContext).spooled = paths;

    return new Promise<GraphQLParams>((resolve, reject) => {
      // yoga's bodies are native or whatwg-node streams: both iterate.
      const source = Readable.from(body as unknown as AsyncIterable<Uint8Array>, { objectMode: false });
      let operations: Record<string, unknown> | undefined;
      let map: Map<string, string[][]> | undefined;
      let filesAllowed = false;
      const received: Promise<void>[] = [];
      const streaming = new Set<BusboyFileStream>();
      let failed = false;
      let parser: BusboyInstance | undefined;
      const fail = (error: unknown) => {
        if (failed) return;
        failed = true;
        source.unpipe();
        source.destroy();
        parser?.destroy();
        // Each spool's pipeline then rejects and closes its file.
        for (const stream of streaming) stream.destroy();
        reject(error);
      };

      try {
        parser = Busboy({
          headers: { 'content-type': request.headers.get('content-type') ?? '' },
          // Every part but the two fields is a file, whether or not it names a file name.
          isPartAFile: (name) => name !== 'operations' && name !== 'map',
          limits: {
            fields: 2,
            fieldSize: maxFieldBytes,
            files: maxFiles,
            fileSize: maxFileBytes + 1,
            parts: 2 + maxFiles,
            fieldNameSize: 100,
            headerPairs: 20,
          },
        });
      } catch (error) {
        fail(malformed((error as Error).message));
        return;
      }
      const busboy = parser;
      busboy.on('field', (name, value, _nameTruncated, valueTruncated) => {
        if (failed) return;
        if (valueTruncated) {
          fail(serviceError('PAYLOAD_TOO_LARGE', `The ${name} field exceeds ${maxFieldBytes} bytes`));
          return;
        }
        try {
          if (name === 'operations') {
            const parsed: unknown = JSON.parse(value);
            if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) {
              throw malformed('operations must be one operation object (batches are not supported)');
            }
            operations = parsed as Record<string, unknown>;
          } else if (operations === undefined) {
            throw malformed('operations must come first');
          } else {
            map = parseMap(value, maxFiles);
            filesAllowed = map.size === 0 || takesFiles(operations, fields);
            if (!filesAllowed) {
              throw graphQLErrorOf(
                badRequest(`Files may be sent only with ${fields.join(', ') || 'no operation'}`),
              );
            }
          }
        } catch (error) {
          fail(error instanceof SyntaxError ? malformed('operations is not JSON') : error);
        }
      });
      const seen = new Set<string>();
      busboy.on('file', (name, stream) => {
        const targets = map?.get(name);
        if (failed || !operations || !map || !filesAllowed || !targets || seen.has(name)) {
          stream.resume();
          if (!failed) {
            fail(
              !map
                ? malformed('operations and map must come before the files')
                : seen.has(name)
                  ? malformed(`the file part ${JSON.stringify(name)} was sent twice`)
                  : malformed(`the file part ${JSON.stringify(name)} is not in map`),
            );
          }
          return;
        }
        seen.add(name);
        const variables = operations.variables as Record<string, unknown>;
        streaming.add(stream);
        const placed = spool(stream, paths).then((file) => {
          streaming.delete(stream);
          for (const segments of targets) place(variables, segments, file);
        });
        placed.catch(fail);
        received.push(placed);
      });
      busboy.on('filesLimit', () =>
        fail(serviceError('PAYLOAD_TOO_LARGE', `At most ${maxFiles} files may be sent at once`)),
      );
      busboy.on('fieldsLimit', () => fail(malformed('only operations and map may be fields')));
      busboy.on('partsLimit', () => fail(malformed('too many parts')));
      busboy.on('error', (error: unknown) => fail(malformed((error as Error).message)));
      busboy.on('finish', () => {
        if (failed) return;
        if (!operations || !map) {
          fail(malformed('operations and map are required'));
          return;
        }
        const complete = operations;
        Promise.all(received)
          .then(() => {
            if (failed) return;
            if (received.length !== map?.size) {
              fail(malformed('a file named in map was not sent'));
              return;
            }
            resolve(complete as GraphQLParams);
          })
          .catch(fail);
      });
      // The body limit's counting stream, or the client's disconnect, ends the source with an error.
      source.on('error', (error) => fail(error));
      source.pipe(busboy);
    });
  }

  return {
    onRequestParse({ request, url, setRequestParser, serverContext }) {
      if (url.pathname !== GRAPHQL_PATH || !isMultipart(request)) return;
      setRequestParser((parsed) => parse(parsed, serverContext));
    },
    async onResponse({ serverContext }) {
      const state = requestStateOf(serverContext);
      const paths = state.spooled;
      if (!paths) return;
      state.spooled = undefined;
      await Promise.all(paths.map((file) => rm(file, { force: true }).catch(() => {})));
    },
  };
}
