// The operations of dashboard/src/operations.graphql, typed by `npm run codegen` (src/generated/dashboard/).
export {
  DashboardAbTestResultsDocument as AbResults,
  DashboardAbTestsDocument as AbTests,
  DashboardAgentsDocument as Agents,
  DashboardDecideDocument as DecideRecommendation,
  DashboardEventsDocument as Events,
  DashboardHistoryDocument as History,
  DashboardModelsDocument as Models,
  DashboardOutcomeDocument as RecordOutcome,
  DashboardPauseDocument as PauseAgent,
  DashboardQueueDocument as Queue,
  DashboardResumeDocument as ResumeAgent,
  DashboardRoleDocument as Role,
  DashboardTaskDocument as TaskDetail,
  DashboardTasksDocument as Tasks,
  DashboardViewerDocument as Viewer,
  DashboardVitalsByHourDocument as VitalsByHour,
} from '../../src/generated/dashboard/graphql.js';
