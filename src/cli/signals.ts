/** Exit code of a command quit by a second Ctrl+C (128 + SIGINT), as shells report it. */
export const QUIT_EXIT_CODE = 130;

/**
 * Ctrl+C (SIGINT) and SIGTERM for every long-running command (run, serve, worker): the first asks the command
 * to stop cleanly (`stop`); a second quits at once with exit code 130. Returns the function that stops listening.
 */
export function onStopSignal(stop: (signal: NodeJS.Signals) => void): () => void {
  let stopping = false;
  const listener = (signal: NodeJS.Signals) => {
    if (stopping) process.exit(QUIT_EXIT_CODE);
    stopping = true;
    stop(signal);
  };
  process.on('SIGINT', listener);
  process.on('SIGTERM', listener);
  return () => {
    process.off('SIGINT', listener);
    process.off('SIGTERM', listener);
  };
}

/** Resolves on the first Ctrl+C or SIGTERM (a second one quits at once); `announce` says what stopping does. */
export function stopRequested(announce: string): Promise<NodeJS.Signals> {
  return new Promise((resolve) =>
    onStopSignal((signal) => {
      console.error(`\n${announce} (${signal === 'SIGINT' ? 'Ctrl+C' : signal} again quits at once)`);
      resolve(signal);
    }),
  );
}
