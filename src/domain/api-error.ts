import type { z } from 'zod';

/** One field-level problem in a request, shown next to the field in the UI. */
export interface FieldError {
  path: string;
  message: string;
}

/**
 * An error the bench app's API answers with a 4xx/5xx status and a JSON body naming what was wrong. It lives in the
 * foundation because the API's routes are declared by the server and by each campaign kind (its view, src/run/kind-view.ts).
 */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly fields: FieldError[] = [],
  ) {
    super(message);
    this.name = 'ApiError';
  }
}

export function fieldErrorsOf(error: z.ZodError): FieldError[] {
  return error.issues.map((issue) => ({
    path: issue.path.length ? issue.path.join('.') : '(root)',
    message: issue.message,
  }));
}

/** Parses `value` with `schema` or throws a 400 naming each bad field of `where`. */
export function parseRequest<S extends z.ZodType>(schema: S, value: unknown, where: string): z.output<S> {
  const result = schema.safeParse(value);
  if (!result.success) {
    const fields = fieldErrorsOf(result.error);
    throw new ApiError(400, 'invalid_request', `${where}: ${fields.map((f) => `${f.path}: ${f.message}`).join('; ')}`, fields);
  }
  return result.data;
}
