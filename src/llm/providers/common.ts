import { LlmError } from '../types.ts';

export const DEFAULT_TIMEOUT_MS = 120_000;

/** A signal that fires on the caller's abort or after `timeoutMs`; `timedOut()` tells which. */
export function callSignal(timeoutMs: number, callerSignal?: AbortSignal): { signal: AbortSignal; timedOut: () => boolean } {
  const timeout = AbortSignal.timeout(timeoutMs);
  const signal = callerSignal ? AbortSignal.any([callerSignal, timeout]) : timeout;
  return { signal, timedOut: () => timeout.aborted };
}

/** Adds `signal` to every request a client library makes through this fetch. */
export function fetchWithSignal(base: typeof fetch, signal: AbortSignal): typeof fetch {
  return (input, init) => base(input, { ...init, signal: init?.signal ? AbortSignal.any([init.signal, signal]) : signal });
}

/** Classifies a failure that is not already an LlmError; a caller's own abort is passed through unchanged. */
export function classifyCallError(error: unknown, where: string, timedOut: boolean, callerSignal?: AbortSignal): unknown {
  if (error instanceof LlmError) return error;
  if (callerSignal?.aborted && !timedOut) return error;
  if (timedOut) return new LlmError('timeout', `${where}: no complete answer within the time limit`);
  const cause = (error as { cause?: { code?: string; message?: string } }).cause;
  if (cause instanceof LlmError) return cause;
  const detail = cause?.code ?? cause?.message ?? (error as Error).message ?? String(error);
  return new LlmError('server_error', `${where}: ${detail}`);
}
