import type { z } from 'zod';
import { describeZodError } from '../../packages/bridge-sdk/src/validation.ts';

/** Formats a zod error as "field: what was expected" parts, so every boundary error names the field (one wording for the bench and the bridge SDK). */
export { describeZodError };

export class ValidationError extends Error {
  constructor(
    readonly where: string,
    readonly details: string,
  ) {
    super(`${where}: ${details}`);
    this.name = 'ValidationError';
  }
}

/** Parses `value` with `schema`; on failure throws a ValidationError naming `where` (a file, a message type, a line). */
export function parseOrThrow<S extends z.ZodType>(schema: S, value: unknown, where: string): z.output<S> {
  const result = schema.safeParse(value);
  if (!result.success) throw new ValidationError(where, describeZodError(result.error));
  return result.data;
}
