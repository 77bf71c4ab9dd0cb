import type { Route } from './route.js';

export const hiringRoutes: Route[] = [];
