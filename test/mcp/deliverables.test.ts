import { describe, expect, it } from 'vitest';
import type { RunningServer } from '../../src/server.js';
import { queueTask } from '../schema/agents-support.js';
import type { TestApp } from '../support/app.js';
import { serveTestApp } from '../support/fixtures.js';
import { callTool, connectMcp } from './mcp-support.js';

let t: TestApp;
let server: RunningServer;
serveTestApp((app) => ({ t, server } = app));

const RequireDeliverable = `mutation { setCompletionPolicy(role: "cfo", input: { requireDeliverable: true }) { role } }`;

describe('MCP complete_task with deliverables', () => {
  it('refuses a completion without evidence for a role that requires it, then completes with some', async () => {
    const agent = await t.caller(['agent']);
    const member = await t.caller(['member'], { tenantId: agent.tenantId });
    const chairman = await t.caller(['chairman'], { tenantId: agent.tenantId });
    await t.app.services.tenants.ensure(agent.tenantId);
    expect((await t.graphql(RequireDeliverable, undefined, chairman)).errors).toBeUndefined();
    const id = await queueTask(t, member, 'cfo');
    const client = await connectMcp(server, agent);
    expect(
      (await callTool(client, 'claim_next_task', { role: 'cfo' })).structuredContent.claimNextTask.task.id,
    ).toBe(id);

    // A refusal of the arguments is JSON-RPC's invalid params, as for any BAD_USER_INPUT; nothing changes.
    await expect(
      callTool(client, 'complete_task', { taskId: id, tokensUsed: 5, costUsd: 0.01 }),
    ).rejects.toMatchObject({
      code: -32602,
      message: expect.stringContaining("The role 'cfo' requires at least one deliverable"),
    });
    expect((await t.db.prisma.task.findUniqueOrThrow({ where: { id } })).status).toBe('running');
    const completed = await callTool(client, 'complete_task', {
      taskId: id,
      tokensUsed: 5,
      costUsd: 0.01,
      deliverables: [{ kind: 'LINK', title: 'Forecast', url: 'https://example.com/forecast' }],
    });

    expect(completed.structuredContent.completeTask).toMatchObject({
      id,
      status: 'completed',
      deliverables: [{ kind: 'LINK', title: 'Forecast', size: 28 }],
    });
    await client.close();
  });

  it('refuses a deliverable of a kind it does not know, as invalid arguments, changing nothing', async () => {
    const agent = await t.caller(['agent']);
    const member = await t.caller(['member'], { tenantId: agent.tenantId });
    await t.app.services.tenants.ensure(agent.tenantId);
    const id = await queueTask(t, member, 'cto');
    const client = await connectMcp(server, agent);
    await callTool(client, 'claim_next_task', { role: 'cto' });

    await expect(
      callTool(client, 'complete_task', {
        taskId: id,
        tokensUsed: 5,
        costUsd: 0.01,
        deliverables: [{ kind: 'VIDEO', url: 'https://example.com' }],
      }),
    ).rejects.toMatchObject({ code: -32602 });
    expect((await t.db.prisma.task.findUniqueOrThrow({ where: { id } })).status).toBe('running');
    await client.close();
  });
});
