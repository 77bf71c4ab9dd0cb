import { z } from 'zod';
import { builder } from '../../builder.js';
import type { InspectedAttachment } from '../../domain/agents/attachments.js';
import {
  DELIVERABLE_KINDS,
  deliverableRule,
  MAX_DELIVERABLE_TEXT,
  MAX_DELIVERABLE_URL,
} from '../../domain/agents/completion-rules.js';
import { setCompletionPolicy } from '../../domain/agents/deliverables.js';
import { receiveAttachment } from '../../http/attachments.js';
import { graphqlArg, zodField, zodInputType } from '../args.js';
import { AgentRoleRef, roleArg } from './types.js';

export const DeliverableKindEnum = builder.enumType('DeliverableKind', {
  description: 'TEXT (a text), LINK (an http or https URL) or FILE (bytes stored like a chat attachment).',
  values: DELIVERABLE_KINDS,
});

zodInputType('DeliverableInput', deliverableRule, {
  description:
    'One piece of evidence a completion carries; a kind’s own fields only (TEXT: text; LINK: url; FILE: data, mimeType, filename).',
  fields: {
    kind: { type: DeliverableKindEnum },
    title: { description: 'What it is, for people; at most 200 characters.' },
    text: { description: `TEXT: at most ${MAX_DELIVERABLE_TEXT} characters.` },
    url: { description: `LINK: an http or https URL of at most ${MAX_DELIVERABLE_URL} characters.` },
    data: {
      description:
        'FILE: standard base64, checked as a chat attachment is (type by signature, at most 10 MiB decoded, within the 1 MiB JSON body).',
    },
    mimeType: { description: 'FILE: the type of its bytes, one a chat attachment may have.' },
    filename: { description: 'FILE: a bare file name, stored with personal data redacted.' },
  },
});

/** A FILE deliverable's base64 data, decoded and checked as a chat attachment is; the issues otherwise. */
function checkedFile(
  deliverable: z.output<typeof deliverableRule>,
  index: number,
  context: z.RefinementCtx,
): InspectedAttachment | undefined {
  if (deliverable.kind !== 'FILE') return undefined;
  const inspection = receiveAttachment({
    data: deliverable.data ?? '',
    mimeType: deliverable.mimeType ?? '',
    filename: deliverable.filename ?? null,
  });
  if (inspection.ok) return inspection.value;
  const keys = { data: 'data', file: 'data', mime_type: 'mimeType', filename: 'filename' } as const;
  for (const problem of inspection.problems) {
    context.addIssue({
      code: 'custom',
      path: ['deliverables', index, keys[problem.field]],
      message: problem.message,
      input: null,
    });
  }
  return undefined;
}

/**
 * A completion report whose FILE deliverables are decoded and checked (completeTask's `input`): every
 * deliverable is checked before anything is written.
 */
export function withCheckedDeliverables<
  Report extends { deliverables?: z.output<typeof deliverableRule>[] | null | undefined },
>(report: Report, context: z.RefinementCtx) {
  const deliverables = (report.deliverables ?? []).map((deliverable, index) => {
    const { data: _data, ...rest } = deliverable;
    return { ...rest, file: checkedFile(deliverable, index, context) };
  });
  return { ...report, deliverables };
}

/** The decoded files of a checked report, to give back once the completion has ended either way. */
export const deliverableFiles = (report: { deliverables: { file?: InspectedAttachment | undefined }[] }) =>
  report.deliverables.flatMap((deliverable) => (deliverable.file ? [deliverable.file] : []));

builder.prismaObject('TaskDeliverable', {
  description:
    'Evidence a completion carried: a text, a link or a file (stored like a chat attachment), with its SHA-256.',
  fields: (t) => ({
    id: t.exposeID('id'),
    position: t.exposeInt('position'),
    kind: t.field({
      type: DeliverableKindEnum,
      resolve: (deliverable) => deliverable.kind.toUpperCase() as (typeof DELIVERABLE_KINDS)[number],
    }),
    title: t.exposeString('title', { nullable: true }),
    text: t.exposeString('text', { nullable: true }),
    url: t.exposeString('url', { nullable: true }),
    sha256: t.exposeString('sha256', {
      description: 'Lower-case hex SHA-256 of the text (UTF-8), the URL, or the file’s bytes.',
    }),
    mimeType: t.exposeString('mimeType', { nullable: true }),
    filename: t.exposeString('filename', { nullable: true }),
    size: t.exposeInt('size', { description: 'Bytes of the text (UTF-8), the URL or the file.' }),
    data: t.string({
      nullable: true,
      description: 'A FILE’s bytes, base64-encoded; null for the other kinds.',
      resolve: async (deliverable, _args, context) => {
        if (deliverable.kind !== 'file') return null;
        const bytes = await context.services.blobs.get(deliverable.sha256);
        return bytes ? bytes.toString('base64') : null;
      },
    }),
    createdAt: t.expose('createdAt', { type: 'DateTime' }),
  }),
});

builder.prismaObjectField('Task', 'deliverables', (t) =>
  t.relation('deliverables', {
    description: 'The evidence its completion carried, in the order reported.',
    query: { orderBy: { position: 'asc' } },
  }),
);

builder.prismaObjectField('AgentRole', 'requireDeliverable', (t) =>
  t.exposeBoolean('requireDeliverable', {
    description: 'Whether a completion of its tasks must carry at least one deliverable.',
  }),
);

builder.prismaObjectField('AgentRole', 'reviewerRole', (t) =>
  t.exposeString('reviewerRole', {
    nullable: true,
    description:
      'The role whose acceptance a completion of its tasks needs before it counts as completed (the task is in_review until then); null: none.',
  }),
);

const completionPolicyInput = z.object({
  requireDeliverable: graphqlArg(z.boolean().nullish(), {
    description:
      'Whether a completion of the role’s tasks must carry at least one deliverable; left out: unchanged.',
  }),
  reviewerRole: graphqlArg(roleArg.nullish(), {
    description:
      'Another role of the tenant whose acceptance a completion needs (the task is in_review until a member, an operator, the chairman or an agent of that role accepts it); null: none; left out: unchanged.',
  }),
});
zodInputType('CompletionPolicyInput', completionPolicyInput);

builder.mutationField('setCompletionPolicy', (t) =>
  t.withAuth({ chairman: true }).field({
    type: AgentRoleRef,
    description:
      'Sets what a completion of a role’s tasks must carry and who must accept it (chairman only): with requireDeliverable, a completeTask without deliverables is refused with BAD_USER_INPUT, reason `deliverable_required`; with reviewerRole, a completion puts the task in_review until accepted (acceptTask) or rejected (rejectTask). NOT_FOUND for an unknown role; BAD_USER_INPUT `unknown_reviewer_role` or `reviewer_is_role`. Audited.',
    ...zodField(
      t,
      z.object({ role: roleArg, input: completionPolicyInput }),
      (_root, { role, input }, context) => setCompletionPolicy(context, role, input),
    ),
  }),
);
