import { graphql } from '../src/generated/graphql/index.js';

/**
 * The GraphQL operations the A2A face runs: each A2A method is one of them (or two, for a card), run through
 * the same yoga execution as GraphQL, REST and MCP, so roles, input rules, idempotency and audit are theirs.
 */

graphql(`
  fragment A2aTaskFields on Task {
    id
    role
    status
    threadId
    message
    output
    error
    createdAt
    startedAt
    finishedAt
    updatedAt
    approval @include(if: $withApproval) {
      id
      status
      summary
    }
    deliverables @include(if: $withArtifacts) {
      id
      position
      kind
      title
      text
      url
      mimeType
      filename
      sha256
      size
      data
    }
  }
`);

// A task SendMessage has just queued is pending, with nothing but its message: the receipt tells the rest
// (its creation time included), so the task is not read again.
export const A2aSendMessage = graphql(`
  mutation A2aSendMessage($role: String!, $input: ChatMessageInput!) {
    sendChatMessage(role: $role, input: $input) {
      taskId
      agentRole
      status
      threadId
      createdAt
    }
  }
`);

export const A2aGetTask = graphql(`
  query A2aGetTask($id: ID!, $withArtifacts: Boolean! = true, $withApproval: Boolean! = true) {
    task(id: $id) {
      ...A2aTaskFields
    }
  }
`);

export const A2aListTasks = graphql(`
  query A2aListTasks(
    $role: String!
    $status: TaskStatus
    $threadId: ID
    $first: Int
    $after: String
    $withArtifacts: Boolean! = false
    $withApproval: Boolean! = true
  ) {
    tasks(role: $role, status: $status, threadId: $threadId, first: $first, after: $after) {
      nextCursor
      totalCount
      nodes {
        ...A2aTaskFields
      }
    }
  }
`);

export const A2aCancelTask = graphql(`
  mutation A2aCancelTask($id: ID!, $withArtifacts: Boolean! = false, $withApproval: Boolean! = true) {
    cancelTask(id: $id, reason: "cancelled by an A2A client") {
      ...A2aTaskFields
    }
  }
`);

export const A2aAgentRole = graphql(`
  query A2aAgentRole($role: String!) {
    agent(role: $role) {
      role
      displayName
      reportsTo
      paused
      reports {
        role
      }
    }
  }
`);

export const A2aTaskUpdates = graphql(`
  subscription A2aTaskUpdates(
    $role: String!
    $taskId: ID!
    $withArtifacts: Boolean! = true
    $withApproval: Boolean! = true
  ) {
    taskUpdated(role: $role, taskId: $taskId) {
      eventId
      status
      updatedAt
      task {
        ...A2aTaskFields
      }
    }
  }
`);

graphql(`
  fragment A2aPushConfigFields on Webhook {
    id
    taskId
    url
    notificationToken
  }
`);

export const A2aCreatePushConfig = graphql(`
  mutation A2aCreatePushConfig($input: CreateTaskWebhookInput!) {
    createTaskWebhook(input: $input) {
      secret
      webhook {
        ...A2aPushConfigFields
      }
    }
  }
`);

export const A2aGetPushConfig = graphql(`
  query A2aGetPushConfig($taskId: ID!, $id: ID!, $role: String) {
    taskWebhook(taskId: $taskId, id: $id, role: $role) {
      ...A2aPushConfigFields
    }
  }
`);

export const A2aListPushConfigs = graphql(`
  query A2aListPushConfigs($taskId: ID!, $role: String) {
    taskWebhooks(taskId: $taskId, role: $role) {
      ...A2aPushConfigFields
    }
  }
`);

export const A2aDeletePushConfig = graphql(`
  mutation A2aDeletePushConfig($taskId: ID!, $id: ID!, $role: String) {
    deleteTaskWebhook(taskId: $taskId, id: $id, role: $role) {
      id
    }
  }
`);
