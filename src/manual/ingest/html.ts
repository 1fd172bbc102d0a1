import type { AnyNode, Element } from 'domhandler';
import type { ManualSection } from '../model.ts';
import { SectionBuilder, SIGNAL_WORDS } from './builder.ts';
import { parseMarkup } from './dom.ts';

const isElement = (node: AnyNode): node is Element => node.type === 'tag';
const SKIPPED = new Set(['script', 'style', 'nav', 'head', 'img', 'svg', 'noscript', 'template']);

function textOf(node: AnyNode): string {
  if (node.type === 'text') return (node as unknown as { data: string }).data;
  if (!isElement(node) || SKIPPED.has(node.name)) return '';
  const inner = node.children.map(textOf).join('');
  return /^(p|div|li|br|tr|td|th|h[1-6])$/.test(node.name) ? ` ${inner} ` : inner;
}

/** The warning type an element declares: data-warning-type, or a class / role naming a signal word. */
function declaredWarning(el: Element): (typeof SIGNAL_WORDS)[string] | null {
  const declared = el.attribs['data-warning-type']?.toLowerCase();
  if (declared && SIGNAL_WORDS[declared]) return SIGNAL_WORDS[declared];
  for (const word of (el.attribs.class ?? '').toLowerCase().split(/\s+/)) {
    const bare = word.replace(/^(admonition|alert|callout)-/, '');
    if (SIGNAL_WORDS[bare]) return SIGNAL_WORDS[bare];
  }
  return null;
}

/**
 * Reads an HTML manual: h1–h6 make sections (their id attribute, else the heading path), <ol> is
 * a procedure, an element whose class or data-warning-type names a signal word (class="warning",
 * "admonition danger") or a paragraph/aside opening with one is a warning block (its id attribute kept).
 */
export function readHtml(html: string, source: string, file: string = source): ManualSection[] {
  const builder = new SectionBuilder(source);
  const visit = (node: AnyNode) => {
    if (!isElement(node)) {
      if (node.type === 'text') builder.text((node as unknown as { data: string }).data);
      return;
    }
    if (SKIPPED.has(node.name)) return;
    const heading = /^h([1-6])$/.exec(node.name);
    if (heading) {
      builder.heading(Number(heading[1]), textOf(node), node.attribs.id);
      return;
    }
    const declared = declaredWarning(node);
    if (declared) {
      // the block's own signal-word line ("Warning") is its label, not its text
      builder.warning(declared, textOf(node).trim().replace(/^(danger|warning|caution|notice)\b[\s:!–—-]*/i, ''), node.attribs.id);
      return;
    }
    switch (node.name) {
      case 'ol':
        builder.steps(node.children.filter(isElement).filter((c) => c.name === 'li').map(textOf));
        return;
      case 'ul':
        for (const item of node.children.filter(isElement)) builder.paragraph(textOf(item), item.attribs.id);
        return;
      case 'p':
      case 'aside':
      case 'blockquote':
        builder.paragraph(textOf(node), node.attribs.id);
        return;
      case 'table':
        builder.text(
          node.children
            .flatMap(function rows(n: AnyNode): Element[] {
              return isElement(n) ? (n.name === 'tr' ? [n] : n.children.flatMap(rows)) : [];
            })
            .map((row) => row.children.filter(isElement).map(textOf).map((c) => c.trim()).join(' | '))
            .join('\n'),
        );
        return;
      default:
        node.children.forEach(visit);
    }
  };
  parseMarkup(html, file, 'html').children.forEach(visit);
  return builder.build();
}
