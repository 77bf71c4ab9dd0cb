import { builder } from '../builder.js';

void builder;
