import { dogfoodRoutes } from './dogfood.js';
import type { Route } from './route.js';

/** Every `/api/v1` route, by domain. */
export const routes: Route[] = [...dogfoodRoutes];
