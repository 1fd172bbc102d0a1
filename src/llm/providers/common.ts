import { LlmError } from '../types.ts';

export const DEFAULT_TIMEOUT_MS = 120_000;

/**
 * How long Ollama keeps a model (and its KV cache) loaded after a call, unless configured (`llm.keepAlive`).
 * Ollama's own default is 5 minutes: a campaign pausing longer (a resume, a slow head unit) would reload the
 * model and recompute every prompt prefix.
 */
export const DEFAULT_OLLAMA_KEEP_ALIVE = '30m';

/**
 * A signal that fires on the caller's abort or after `timeoutMs`; `timedOut()` tells which. `done()` ends it
 * (clears the timer, detaches from the caller's signal, which outlives many calls); call it when the call ends.
 * One controller and a timer rather than AbortSignal.timeout + AbortSignal.any: those register weak references
 * and finalizers per call, which the garbage collector pays for on every model call.
 */
export function callSignal(timeoutMs: number, callerSignal?: AbortSignal): { signal: AbortSignal; timedOut: () => boolean; done: () => void } {
  const controller = new AbortController();
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    controller.abort(new DOMException('The operation was aborted due to timeout', 'TimeoutError'));
  }, timeoutMs);
  // like AbortSignal.timeout: a pending limit does not keep the process alive
  timer.unref();
  let unfollow = () => {};
  if (callerSignal?.aborted) controller.abort(callerSignal.reason);
  else if (callerSignal) unfollow = followCaller(callerSignal, controller);
  return {
    signal: controller.signal,
    timedOut: () => timedOut,
    done: () => {
      clearTimeout(timer);
      unfollow();
    },
  };
}

// the calls in flight under each caller's signal (a run's Ctrl+C): one listener per caller signal relays its abort to
// every call, rather than one listener per call, which passed Node's limit of 10 (a MaxListenersExceededWarning) when
// more than ten calls shared a run's signal
const followers = new WeakMap<AbortSignal, Set<AbortController>>();

function followCaller(callerSignal: AbortSignal, controller: AbortController): () => void {
  let calls = followers.get(callerSignal);
  if (!calls) {
    const inFlight = new Set<AbortController>();
    followers.set(callerSignal, inFlight);
    callerSignal.addEventListener('abort', () => inFlight.forEach((call) => call.abort(callerSignal.reason)), { once: true });
    calls = inFlight;
  }
  calls.add(controller);
  const following = calls;
  return () => following.delete(controller);
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
