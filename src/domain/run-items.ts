/** The run mode of a run whose items are item results (manual-QA questions, tool-agents trials): src/store/store.ts, createItemRun. */
export const ITEMS_MODE = 'items';

/** Whether a run's items are conversations (turns, verdicts: dialogue, suite and live runs) rather than item results. */
export function holdsConversations(run: { mode: string }): boolean {
  return run.mode !== ITEMS_MODE;
}

/** The modes that say how a dialogue plan was drawn; other kinds' modes (scripted, items, live) only repeat their kind. */
const PLAN_MODES: readonly string[] = ['guided', 'baseline', 'mixed'];

/** One label per run kind, the same in the app's runs list and `icabench runs`: the kind, and how its plan was drawn where that says more. */
export function runKindLabel(run: { kind: string; mode: string }): string {
  return PLAN_MODES.includes(run.mode) ? `${run.kind} · ${run.mode}` : run.kind;
}
