import type { Route } from './route.js';

export const finetuningRoutes: Route[] = [];
