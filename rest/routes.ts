import { agentsRoutes } from './agents.js';
import { connectorApprovalsRoutes } from './connector-approvals.js';
import { connectorsRoutes } from './connectors.js';
import { dogfoodRoutes } from './dogfood.js';
import { experimentsRoutes } from './experiments.js';
import { finetuningRoutes } from './finetuning.js';
import { hiringRoutes } from './hiring.js';
import type { Route } from './route.js';
import { taskApprovalsRoutes } from './task-approvals.js';
import { tasksRoutes } from './tasks.js';

/** Every `/api/v1` route, by domain. */
export const routes: Route[] = [
  ...agentsRoutes,
  ...experimentsRoutes,
  ...connectorsRoutes,
  ...connectorApprovalsRoutes,
  ...taskApprovalsRoutes,
  ...tasksRoutes,
  ...dogfoodRoutes,
  ...hiringRoutes,
  ...finetuningRoutes,
];
