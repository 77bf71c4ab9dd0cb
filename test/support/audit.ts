import { graphql } from '../../src/generated/graphql/index.js';

/** The caller tenant's audit log, optionally for one action. */
export const AuditLog = graphql(`
  query AuditLogForTest($action: String) {
    auditLog(action: $action) {
      nodes {
        action
        targetId
        outcome
      }
    }
  }
`);
