/**
 * Where a run and one of its items open in the app, by the page its kind's view names (src/run/kind-view.ts: the listed
 * run's `view.page`, or the live snapshot's `page`). Every link to a run or an item goes through here; a page the app
 * does not have (a kind newer than this app) opens the generic run page, and its items open no page of their own.
 */
const PAGES: Record<string, { run: string | null; items: string }> = {
  report: { run: null, items: 'conversations' },
  manual: { run: 'manual', items: 'manual' },
  'tool-agents': { run: 'tool-agents', items: 'tool-agents' },
};

/** Whether the app has the page a kind's view names. */
export function knownPage(page: string | null | undefined): page is string {
  return typeof page === 'string' && page in PAGES;
}

export function runHref(runId: string, page: string | null | undefined): string {
  const segment = knownPage(page) ? PAGES[page].run : null;
  return `#/runs/${encodeURIComponent(runId)}${segment ? `/${segment}` : ''}`;
}

export function itemHref(runId: string, page: string | null | undefined, key: string): string {
  if (!knownPage(page)) return runHref(runId, page);
  return `#/runs/${encodeURIComponent(runId)}/${PAGES[page].items}/${encodeURIComponent(key)}`;
}
