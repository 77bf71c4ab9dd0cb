import type { z } from 'zod';
import { invalidInput } from '../domain/errors.js';
import { toValidationDetail } from './pydantic.js';

export type { ValidationDetail } from './pydantic.js';
export { camelizeInput, snakePath } from './schema-walk.js';

/**
 * Validates a field's arguments against the rules defined once for GraphQL and REST; throws a 422
 * `BAD_USER_INPUT` error whose detail items are located relative to the arguments.
 */
export function parseArgs<Schema extends z.ZodType>(schema: Schema, args: unknown): z.output<Schema> {
  const result = schema.safeParse(args, { reportInput: true });
  if (result.success) return result.data;
  throw invalidInput(toValidationDetail(result.error.issues, schema, args));
}
