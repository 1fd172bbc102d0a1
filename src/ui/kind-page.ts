import type { ComponentType } from 'react';

/**
 * A page of the app that shows the runs of the kinds whose view names it (`page` in src/run/kind-view.ts): the view
 * file of the page declares it (its name, where its run and item pages live, and their components), the way a kind's
 * view declares its routes to the server; src/ui/kind-pages.ts lists them, and the app routes to them from there alone.
 */
export interface KindPage {
  /** the page name a kind's view declares (`report`, `manual`, `tool-agents`) */
  name: string;
  /** the segment of the run's page under `#/runs/<id>/`; null: the run page itself, `#/runs/<id>` */
  run: string | null;
  /** the segment an item's page opens under: `#/runs/<id>/<items>/<key>` */
  items: string;
  RunView: ComponentType<{ runId: string }>;
  ItemView: ComponentType<{ runId: string; itemKey: string }>;
}

/** The link to a run's page; a page the app does not have (null) opens the generic run page. */
export function pageRunHref(page: Pick<KindPage, 'run'> | null, runId: string): string {
  return `#/runs/${encodeURIComponent(runId)}${page?.run ? `/${page.run}` : ''}`;
}

/** The link to an item's page; without a page of its own, the run's. */
export function pageItemHref(page: Pick<KindPage, 'run' | 'items'> | null, runId: string, key: string): string {
  return page ? `#/runs/${encodeURIComponent(runId)}/${page.items}/${encodeURIComponent(key)}` : pageRunHref(null, runId);
}
