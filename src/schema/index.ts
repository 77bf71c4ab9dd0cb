import { lexicographicSortSchema } from 'graphql';
import { builder } from '../builder.js';
import './viewer.js';
import './audit.js';
import './agents.js';
import './dogfood.js';
import './experiments.js';
import './connectors.js';
import './connectors/credentials.js';
import './hiring.js';
import './finetuning.js';
import './finetuning-canary.js';
import './webhooks.js';
import './routines.js';
import './events.js';

export const schema = lexicographicSortSchema(builder.toSchema());
