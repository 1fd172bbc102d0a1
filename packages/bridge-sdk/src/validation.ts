import type { z } from 'zod';

/** A zod error as one line: each issue as `path: message` (the bench's messages read the same way). */
export function describeZodError(error: z.ZodError): string {
  return error.issues.map((issue) => `${issue.path.length ? issue.path.join('.') : '(root)'}: ${issue.message}`).join('; ');
}
