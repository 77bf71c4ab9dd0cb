import type { Route } from './route.js';

export const agentsRoutes: Route[] = [];
