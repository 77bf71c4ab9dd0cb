import type { Route } from './route.js';

export const connectorsRoutes: Route[] = [];
