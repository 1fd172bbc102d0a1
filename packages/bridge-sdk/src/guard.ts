/**
 * The last-resort guard around every socket handler of the bridge. socket.io runs event listeners
 * outside its own try/catch (on process.nextTick), so an exception thrown by a listener — or a
 * promise it returns that rejects — would end the whole bench. Wrapped, it goes to `onError`, which
 * contains it to that socket (logs it, hangs that socket up) and the process carries on.
 */
export function guarded<A extends unknown[]>(onError: (error: unknown) => void, handler: (...args: A) => unknown): (...args: A) => void {
  const report = (error: unknown) => {
    try {
      onError(error);
    } catch {
      // the error path itself failed (e.g. the socket is already gone): nothing more to do
    }
  };
  return (...args: A) => {
    try {
      const result = handler(...args);
      if (result instanceof Promise) result.catch(report);
    } catch (error) {
      report(error);
    }
  };
}

export function errorMessage(error: unknown): string {
  if (error instanceof Error) return `${error.name}: ${error.message}`;
  return String(error);
}
