import { z } from 'zod';
import { builder, validatedArgs } from '../../builder.js';
import {
  ALLOWED_ATTACHMENT_TYPES,
  type AttachmentInput,
  inspectAttachment,
  MAX_ATTACHMENTS_PER_MESSAGE,
} from '../../domain/agents/attachments.js';
import { type ChatReceipt, sendChatMessage } from '../../domain/agents/chat.js';
import { roleArg, TaskRef, TaskStatusEnum, ThreadRef } from './types.js';

export const MAX_MESSAGE_LENGTH = 4096;

const ChatAttachmentInput = builder.inputType('ChatAttachmentInput', {
  fields: (t) => ({
    data: t.string({
      required: true,
      description: 'Standard base64 (RFC 4648, padded), at most 10 MiB decoded.',
    }),
    mimeType: t.string({
      required: true,
      description: 'image/png, image/jpeg, image/gif, image/webp or application/pdf.',
    }),
    filename: t.string({ description: 'A bare file name; personal data in it is stored redacted.' }),
  }),
});

const ChatMessageInput = builder.inputType('ChatMessageInput', {
  fields: (t) => ({
    message: t.string({ required: true, description: `1 to ${MAX_MESSAGE_LENGTH} characters.` }),
    attachments: t.field({
      type: [ChatAttachmentInput],
      description: `At most ${MAX_ATTACHMENTS_PER_MESSAGE}.`,
    }),
    threadId: t.id({ description: 'A thread of the same role to append this turn to.' }),
    persistThread: t.boolean({ description: 'Default true; false when the caller already stored the turn.' }),
  }),
});

/** Longest attachment data echoed back in a 422 item: the data can be megabytes. */
const DATA_ECHO_LIMIT = 64;
const echo = (key: string, value: unknown) =>
  key === 'data' && typeof value === 'string' && value.length > DATA_ECHO_LIMIT
    ? `${value.slice(0, DATA_ECHO_LIMIT)}…`
    : value;

const problemKeys = { data: 'data', mime_type: 'mimeType', filename: 'filename' } as const;

/** Checks an attachment completely (type, strict base64, size, signature, filename) and yields it decoded. */
const attachmentArg = z
  .object({
    data: z
      .string()
      .describe(
        'Standard base64 (RFC 4648, padded), at most 10 MiB decoded; the bytes must match mime_type.',
      ),
    mimeType: z.string().describe(ALLOWED_ATTACHMENT_TYPES.join(', ')),
    filename: z
      .string()
      .nullish()
      .describe(
        'A bare file name of at most 255 characters without an executable extension; stored with personal data redacted.',
      ),
  })
  .transform((value, context) => {
    const inspected = inspectAttachment(value as AttachmentInput);
    if (inspected.ok) return inspected.value;
    for (const problem of inspected.problems) {
      const key = problemKeys[problem.field];
      context.addIssue({
        code: 'custom',
        path: [key],
        message: problem.message,
        input: echo(key, value[key]),
      });
    }
    return z.NEVER;
  });

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
    attachments: z
      .array(attachmentArg)
      .max(MAX_ATTACHMENTS_PER_MESSAGE)
      .nullish()
      .transform((attachments) => attachments ?? []),
    threadId: z.guid().nullish().describe('A thread of the caller’s tenant and the same role.'),
    persistThread: z
      .boolean()
      .optional()
      .transform((persist) => persist ?? true)
      .describe('Default true; internal callers that already stored the turn send false.'),
  }),
});

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
    args: {
      role: t.arg.string({ required: true }),
      input: t.arg({ type: ChatMessageInput, required: true }),
    },
    ...validatedArgs(chatArgs, (_root, { role, input }, context) =>
      sendChatMessage(context, { role, ...input }),
    ),
  }),
);

builder.queryField('thread', (t) =>
  t.withAuth({ authenticated: true }).field({
    type: ThreadRef,
    nullable: true,
    description: 'A conversation of the caller’s tenant; null when there is none with this id.',
    args: { id: t.arg.id({ required: true }) },
    ...validatedArgs(z.object({ id: z.guid() }), (_root, { id }, context) =>
      context.prisma.thread.findFirst({ where: { id, tenantId: context.viewer.tenantId } }),
    ),
  }),
);
