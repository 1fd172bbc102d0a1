/**
 * Where a run and one of its items open in the app, by the run's kind (the stored kind, or the kind a live run
 * names: a suite run is a dialogue run). Dialogue runs open in the run report and their conversations; the other
 * kinds in their own views (questions, task trials). Every link to a run or an item goes through here.
 */
const ITEM_VIEWS: Record<string, string> = { 'manual-qa': 'manual', 'tool-agents': 'tool-agents' };

/** The view segment of a kind with a view of its own (`manual`, `tool-agents`); null for dialogue and suite runs. */
export function kindView(kind: string | null): string | null {
  return (kind && ITEM_VIEWS[kind]) ?? null;
}

export function runHref(runId: string, kind: string | null): string {
  const view = kindView(kind);
  return `#/runs/${encodeURIComponent(runId)}${view ? `/${view}` : ''}`;
}

export function itemHref(runId: string, kind: string | null, key: string): string {
  return `#/runs/${encodeURIComponent(runId)}/${kindView(kind) ?? 'conversations'}/${encodeURIComponent(key)}`;
}
