/** The run mode of a run whose items are item results (manual-QA questions, tool-agents trials): src/store/store.ts, createItemRun. */
export const ITEMS_MODE = 'items';

/** Whether a run's items are conversations (turns, verdicts: dialogue, suite and live runs) rather than item results. */
export function holdsConversations(run: { mode: string }): boolean {
  return run.mode !== ITEMS_MODE;
}
