import { describe, expect, it } from 'vitest';
import { campaignKind, campaignKindNames } from '../../src/kinds/registry.ts';
import { KIND_PAGES, pageNamed } from '../../src/ui/kind-pages.ts';
import { itemHref, runHref } from '../../src/ui/routes.ts';

/**
 * #35 item 5: a kind's app page is declared by its view file (src/ui/kind-page.ts), as a kind's view declares its routes
 * to the server; the app routes runs and items through that list (src/ui/kind-pages.ts), never by a page's name.
 */
describe("the app's kind pages", () => {
  it('every page a built-in kind names is one the app has, with run and item views; no two pages share a segment', async () => {
    for (const name of campaignKindNames()) {
      const page = (await campaignKind(name)).view.page;
      expect(pageNamed(page), `${name} names page ${page}`).not.toBeNull();
    }
    expect(new Set(KIND_PAGES.map((p) => p.name)).size).toBe(KIND_PAGES.length);
    expect(new Set(KIND_PAGES.map((p) => p.items)).size).toBe(KIND_PAGES.length);
    const runSegments = KIND_PAGES.flatMap((p) => (p.run ? [p.run] : []));
    expect(new Set(runSegments).size).toBe(runSegments.length);
    for (const page of KIND_PAGES) {
      expect(typeof page.RunView).toBe('function');
      expect(typeof page.ItemView).toBe('function');
    }
  });

  it('links follow what the page declares, and a page the app does not have opens the generic run page', () => {
    for (const page of KIND_PAGES) {
      expect(runHref('r 1', page.name)).toBe(`#/runs/r%201${page.run ? `/${page.run}` : ''}`);
      expect(itemHref('r 1', page.name, 'k#1')).toBe(`#/runs/r%201/${page.items}/k%231`);
    }
    expect(runHref('r1', 'fifth-words')).toBe('#/runs/r1');
    expect(itemHref('r1', 'fifth-words', 'k')).toBe('#/runs/r1');
  });
});
