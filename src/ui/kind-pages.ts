import type { KindPage } from './kind-page.ts';
import { MANUAL_PAGE } from './views/ManualRunView.tsx';
import { REPORT_PAGE } from './views/RunReportView.tsx';
import { TOOL_AGENTS_PAGE } from './views/ToolRunView.tsx';

/** The pages the app has for the kinds' runs, each declared by its view file (src/ui/kind-page.ts). */
export const KIND_PAGES: readonly KindPage[] = [REPORT_PAGE, MANUAL_PAGE, TOOL_AGENTS_PAGE];

/** The page a kind's view names; null for a page this app does not have (a kind newer than the app). */
export function pageNamed(name: string | null | undefined): KindPage | null {
  return KIND_PAGES.find((page) => page.name === name) ?? null;
}
