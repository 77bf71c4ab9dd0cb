import { GraphQLError } from 'graphql';
import { z } from 'zod';
import { builder } from '../../builder.js';
import {
  ALLOWED_ATTACHMENT_TYPES,
  MAX_ATTACHMENTS_PER_MESSAGE,
  ReceivedFile,
} from '../../domain/agents/attachments.js';
import { type ChatReceipt, sendChatMessage } from '../../domain/agents/chat.js';
import { roleScope } from '../../domain/agents/role-binding.js';
import { type ReceivedAttachment, receiveAttachment, sendWithAttachments } from '../../http/attachments.js';
import { idArg, zodField, zodInputType } from '../args.js';
import { roleArg, TaskRef, TaskStatusEnum, ThreadRef } from './types.js';

export const MAX_MESSAGE_LENGTH = 4096;

builder.scalarType('File', {
  description:
    'A file part of a GraphQL multipart request (https://github.com/jaydenseric/graphql-multipart-request-spec). Input only.',
  serialize: () => {
    throw new Error('File is an input type');
  },
  parseValue: (value) => {
    if (value instanceof ReceivedFile) return value;
    throw new GraphQLError('File takes a file part of a multipart request, not a JSON value');
  },
  parseLiteral: () => {
    throw new GraphQLError('File takes a file part of a multipart request, not a literal');
  },
});

/** Longest attachment data echoed back in a 422 item: the data can be megabytes. */
const DATA_ECHO_LIMIT = 64;
const echo = (key: string, value: unknown) =>
  // A received file is never echoed: it names a spool file of the server.
  key === 'file'
    ? null
    : key === 'data' && typeof value === 'string' && value.length > DATA_ECHO_LIMIT
      ? `${value.slice(0, DATA_ECHO_LIMIT)}…`
      : value;

const problemKeys = { data: 'data', file: 'file', mime_type: 'mimeType', filename: 'filename' } as const;

/**
 * Decodes and inspects an attachment (type, size, signature, filename): its content, or the issues at their
 * fields.
 */
function inspected(value: ReceivedAttachment, context: z.RefinementCtx) {
  const inspection = receiveAttachment(value);
  if (inspection.ok) return inspection.value;
  for (const problem of inspection.problems) {
    const key = problemKeys[problem.field];
    context.addIssue({
      code: 'custom',
      path: [key],
      message: problem.message,
      input: echo(key, value[key]),
    });
  }
  return z.NEVER;
}

const attachmentType = z.string().describe(ALLOWED_ATTACHMENT_TYPES.join(', '));
const attachmentFilename = z
  .string()
  .nullish()
  .describe(
    'A bare file name of at most 255 characters without an executable extension; stored with personal data redacted.',
  );

/**
 * An attachment as a JSON body carries it (REST, as the spec defines the body): strict base64 `data`,
 * checked completely and decoded.
 */
const attachmentArg = z
  .object({
    data: z
      .string()
      .describe(
        'Standard base64 (RFC 4648, padded), at most 10 MiB decoded; the bytes must match mime_type.',
      ),
    mimeType: attachmentType,
    filename: attachmentFilename,
  })
  .transform(inspected);

/**
 * An attachment over GraphQL: base64 `data` within the 1 MiB JSON body, or a `file` part of a multipart
 * request, exactly one of the two, under the same rules.
 */
const fileOrDataAttachmentArg = z
  .object({
    data: z.string().nullish(),
    file: z.custom<ReceivedFile>((value) => value instanceof ReceivedFile).nullish(),
    mimeType: attachmentType,
    filename: attachmentFilename,
  })
  .transform((value, context) => {
    const given = (value.data ?? null) !== null;
    if (given === ((value.file ?? null) !== null)) {
      context.addIssue(
        given
          ? { code: 'custom', path: ['file'], message: 'send either data or file, not both', input: null }
          : {
              code: 'custom',
              path: ['data'],
              message: 'data (base64) or file (a file part of a multipart request) is required',
              input: null,
            },
      );
      return z.NEVER;
    }
    return inspected(value, context);
  });

/** A message's attachments, of either kind. */
const attachmentsOf = <Attachment extends z.ZodType>(attachment: Attachment) =>
  z
    .array(attachment)
    .max(MAX_ATTACHMENTS_PER_MESSAGE)
    .nullish()
    .transform((attachments) => attachments ?? []);

/** Length in characters (code points), as the spec and Python count them. */
const characters = (text: string) => {
  let count = 0;
  for (const _ of text) count += 1;
  return count;
};

export const chatArgs = z.object({
  role: roleArg,
  input: z.object({
    message: z
      .string()
      .min(1)
      .superRefine((message, context) => {
        if (characters(message) > MAX_MESSAGE_LENGTH) {
          context.addIssue({
            code: 'too_big',
            origin: 'string',
            maximum: MAX_MESSAGE_LENGTH,
            inclusive: true,
            input: message,
          });
        }
      })
      .meta({ maxLength: MAX_MESSAGE_LENGTH }),
    attachments: attachmentsOf(attachmentArg),
    threadId: z.guid().nullish().describe('A thread of the caller’s tenant and the same role.'),
    persistThread: z
      .boolean()
      .optional()
      .transform((persist) => persist ?? true)
      .describe('Default true; internal callers that already stored the turn send false.'),
  }),
});

// GraphQL's input types are read off the rules GraphQL applies, those that take a file too. Their
// descriptions are given here, beside the rules: the rules' own (zod's `describe`) are REST's, whose
// attachments are base64 only.
zodInputType('ChatAttachmentInput', fileOrDataAttachmentArg, {
  description: 'One attachment: its bytes as base64 `data` or as a `file` part, exactly one of the two.',
  fields: {
    data: {
      description:
        'Standard base64 (RFC 4648, padded), at most 10 MiB decoded; the whole JSON body is at most 1 MiB, so larger attachments travel as `file`.',
    },
    file: { type: 'File', description: 'The bytes as a file part of a multipart request, at most 10 MiB.' },
    mimeType: { description: 'image/png, image/jpeg, image/gif, image/webp or application/pdf.' },
    filename: { description: 'A bare file name; personal data in it is stored redacted.' },
  },
});

const messageWithFiles = chatArgs.shape.input.extend({ attachments: attachmentsOf(fileOrDataAttachmentArg) });

zodInputType('ChatMessageInput', messageWithFiles, {
  fields: {
    message: { description: `1 to ${MAX_MESSAGE_LENGTH} characters.` },
    attachments: { description: `At most ${MAX_ATTACHMENTS_PER_MESSAGE}.` },
    threadId: { type: 'ID', description: 'A thread of the same role to append this turn to.' },
    persistThread: { description: 'Default true; false when the caller already stored the turn.' },
  },
});

/**
 * The arguments as GraphQL takes them: an attachment may also be a file. REST checks and documents `chatArgs`
 * (the spec's body, base64 only); both apply the same attachment rules.
 */
const chatArgsWithFiles = chatArgs.extend({ input: messageWithFiles });

const ChatReceiptRef = builder.objectRef<ChatReceipt>('ChatReceipt').implement({
  description: 'The answer to a chat message: the task it became.',
  fields: (t) => ({
    taskId: t.exposeID('taskId'),
    agentRole: t.exposeString('agentRole'),
    status: t.field({
      type: TaskStatusEnum,
      description: 'Always pending.',
      resolve: (receipt) => receipt.status,
    }),
    acknowledgment: t.exposeString('acknowledgment'),
    threadId: t.exposeID('threadId', {
      nullable: true,
      description: 'Null when the turn was not stored in a thread.',
    }),
    createdAt: t.expose('createdAt', {
      type: 'DateTime',
      description: 'When the task was created: its `createdAt`, without reading it.',
    }),
    task: t.field({
      type: TaskRef,
      resolve: (receipt, _args, context) =>
        context.prisma.task.findUniqueOrThrow({ where: { id: receipt.taskId } }),
    }),
  }),
});

builder.mutationField('sendChatMessage', (t) =>
  t.withAuth({ authenticated: true }).field({
    type: ChatReceiptRef,
    description: 'Queues a chat message as a pending task for an agent role (also when the role is paused).',
    ...zodField(t, chatArgsWithFiles, (_root, { role, input }, context) =>
      sendWithAttachments(input.attachments, () =>
        sendChatMessage(context, { blobs: context.services.blobs, log: context.log }, { role, ...input }),
      ),
    ),
    extensions: { argsSchema: chatArgs },
  }),
);

builder.queryField('thread', (t) =>
  t.withAuth({ authenticated: true }).field({
    type: ThreadRef,
    nullable: true,
    description:
      'A conversation of the caller’s tenant (of its roles, for an agent token bound to roles); null when there is none with this id.',
    ...zodField(t, z.object({ id: idArg() }), (_root, { id }, context) =>
      context.prisma.thread.findFirst({ where: { id, ...roleScope(context.viewer) } }),
    ),
  }),
);
