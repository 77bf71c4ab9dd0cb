import { z } from 'zod';
import { builder } from '../../builder.js';
import { tokenUsageRule } from '../../domain/agents/completion-rules.js';
import {
  cancelTask,
  type Delegation,
  delegateTask,
  MAX_DELEGATIONS,
  RESUME_ON,
} from '../../domain/agents/delegation.js';
import { graphqlArg, idArg, zodField, zodInputType } from '../args.js';
import { chatArgs } from './chat.js';
import { ResumeOnEnum, roleArg, TaskRef } from './types.js';

const costUsd = z.number().min(0).max(1_000_000_000);

const delegationDraft = z.object({
  role: roleArg,
  message: chatArgs.shape.input.shape.message,
  costCapUsd: costUsd.nullish(),
});
zodInputType('DelegationInput', delegationDraft, {
  description: 'One sub-task: the role it is for, what it is asked, and optionally the most it may cost.',
  fields: {
    role: { description: 'A role below the delegating task’s in the org chart (or across, where allowed).' },
    costCapUsd: {
      description:
        'USD, ≥ 0; with its siblings’ caps, at most what the delegating task’s budgets and cap leave.',
    },
  },
});

const delegateInput = z.object({
  delegations: z.array(delegationDraft).min(1).max(MAX_DELEGATIONS),
  resumeOn: graphqlArg(z.enum(RESUME_ON), { type: ResumeOnEnum, defaultValue: 'all_ended' })
    .nullish()
    .transform((resumeOn) => resumeOn ?? 'all_ended'),
  tokensUsed: z.int().min(0).max(Number.MAX_SAFE_INTEGER),
  costUsd,
  usage: tokenUsageRule.nullish(),
});
zodInputType('DelegateTaskInput', delegateInput, {
  description:
    'Sub-tasks to queue, and what the delegating attempt has used so far (charged now; the task’s totals add up every attempt).',
  fields: {
    delegations: { description: `1 to ${MAX_DELEGATIONS} sub-tasks.` },
    tokensUsed: { type: 'SafeInt', description: 'Tokens this attempt used until now.' },
    costUsd: { description: 'USD this attempt cost until now, kept to the micro-dollar.' },
  },
});

const DelegationRef = builder.objectRef<Delegation>('Delegation').implement({
  description: 'A delegation: the task now waiting, and the sub-tasks it queued.',
  fields: (t) => ({
    parent: t.field({ type: TaskRef, resolve: (delegation) => delegation.parent }),
    children: t.field({ type: [TaskRef], resolve: (delegation) => delegation.children }),
  }),
});

builder.mutationField('delegateTask', (t) =>
  t.withAuth({ agent: true }).field({
    type: DelegationRef,
    description:
      'Hands parts of a task the calling agent holds to other roles: a pending sub-task per delegation, and the task waits (`waiting`, no lease) until they have ended (or one failed, with `resumeOn: FIRST_FAILURE`), then is pending again for its role with their outputs as `children`. BAD_USER_INPUT with `extensions.reason` when a delegation goes against the rules, and nothing is written: `unknown_role`, `delegation_cycle` (the role is already in the task’s chain: `extensions.chain`), `not_along_org_chart` (`extensions.targets`), `depth_limit`, `cap_exceeds_room` (`extensions.roomUsd`). NOT_FOUND, CONFLICT or FORBIDDEN as for completeTask.',
    ...zodField(t, z.object({ taskId: idArg(), input: delegateInput }), (_root, { taskId, input }, context) =>
      delegateTask(context, taskId, input),
    ),
  }),
);

builder.mutationField('cancelTask', (t) =>
  t.withAuth({ authenticated: true }).field({
    type: TaskRef,
    description:
      'Cancels a task that has not ended, and every sub-task under it that has not ended. The chairman or an operator may cancel any task; anyone else only one they queued or delegated (FORBIDDEN). CONFLICT (`task_ended`) for a task that already ended; NOT_FOUND for one the caller cannot see. Audited.',
    ...zodField(
      t,
      z.object({ id: idArg(), reason: z.string().trim().min(1).max(2000).nullish() }),
      (_root, { id, reason }, context) => cancelTask(context, id, reason ?? null),
    ),
  }),
);
