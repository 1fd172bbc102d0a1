import { pageItemHref, pageRunHref } from './kind-page.ts';
import { pageNamed } from './kind-pages.ts';

/**
 * Where a run and one of its items open in the app, by the page its kind's view names (src/run/kind-view.ts: the listed
 * run's `view.page`, or the live snapshot's `page`), as the page's view file declares it (src/ui/kind-pages.ts). A page
 * the app does not have (a kind newer than this app) opens the generic run page, and its items open no page of their own.
 */

export function runHref(runId: string, page: string | null | undefined): string {
  return pageRunHref(pageNamed(page), runId);
}

export function itemHref(runId: string, page: string | null | undefined, key: string): string {
  return pageItemHref(pageNamed(page), runId, key);
}
