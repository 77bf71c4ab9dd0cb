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
    approval {
      id
      status
      summary
    }
  }
`);

export const A2aSendMessage = graphql(`
  mutation A2aSendMessage($role: String!, $input: ChatMessageInput!) {
    sendChatMessage(role: $role, input: $input) {
      threadId
      task {
        ...A2aTaskFields
      }
    }
  }
`);

export const A2aGetTask = graphql(`
  query A2aGetTask($id: ID!) {
    task(id: $id) {
      ...A2aTaskFields
    }
  }
`);

export const A2aListTasks = graphql(`
  query A2aListTasks($role: String!, $status: TaskStatus, $first: Int, $after: String) {
    tasks(role: $role, status: $status, first: $first, after: $after) {
      nextCursor
      nodes {
        ...A2aTaskFields
      }
    }
  }
`);

export const A2aCancelTask = graphql(`
  mutation A2aCancelTask($id: ID!) {
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
  subscription A2aTaskUpdates($role: String!, $taskId: ID!) {
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
