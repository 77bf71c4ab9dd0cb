import { lexicographicSortSchema } from 'graphql';
import { builder } from '../builder.js';
import './viewer.js';
import './audit.js';
import './dogfood.js';

export const schema = lexicographicSortSchema(builder.toSchema());
