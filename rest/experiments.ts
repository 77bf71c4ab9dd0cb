import type { Route } from './route.js';

export const experimentsRoutes: Route[] = [];
