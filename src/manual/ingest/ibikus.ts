import type { AnyNode, Element } from 'domhandler';
import type { ManualBlock, ManualSection, WarningType } from '../model.ts';
import { collapseSpace } from './builder.ts';
import { parseMarkup } from './dom.ts';
import { ManualFormatError } from './errors.ts';

/** IBIKUS warning-type attribute → the manual's English signal word. */
export const IBIKUS_WARNING_TYPES: Readonly<Record<string, WarningType>> = { Warnung: 'Warning', Hinweis: 'Notice', Gefahr: 'Danger' };

/** Elements that carry no text a reader hears (pictures, links to the table of contents). */
const SKIPPED = new Set(['graphic', 'graphic-inline', 'toc', 'graphic-dynamic', 'animation']);

/** A first paragraph that is only the signal word printed above the block ("Warning", "Caution", "Extreme hazard"). */
const SIGNAL_LINE = /^(warning|notice|danger|caution|extreme hazard|attention)$/i;

const isElement = (node: AnyNode): node is Element => node.type === 'tag';

function children(el: Element): Element[] {
  return el.children.filter(isElement);
}

/**
 * The text of an element as it reads: inline markup flattened; of consecutive <value> variants
 * (80 km/h | 80 km/h, approx. 50 mph | …) only the first; in titles only the first <pcdata-case>.
 */
export function ibikusText(node: AnyNode, inTitle = false): string {
  if (node.type === 'text') return (node as unknown as { data: string }).data;
  if (!isElement(node) || SKIPPED.has(node.name)) return '';
  const parts: string[] = [];
  let previous: string | null = null;
  for (const child of node.children) {
    if (isElement(child)) {
      const variant = child.name === 'value' || (inTitle && child.name === 'pcdata-case');
      if (variant && previous === child.name) continue;
      previous = child.name;
      const text = ibikusText(child, inTitle || node.name === 'title');
      const block = child.name === 'paragraph' || child.name === 'item' || child.name === 'entry';
      parts.push(block ? ` ${text} ` : text);
    } else if (child.type === 'text') {
      previous = (child as unknown as { data: string }).data.trim() ? null : previous;
      parts.push((child as unknown as { data: string }).data);
    }
  }
  return parts.join('');
}

interface ReadContext {
  source: string;
  /** the section the current one sits in: a warning's topic */
  parentSectionId: string | null;
  generated: number;
}

function warningBlock(warning: Element, id: string, summary: string, context: ReadContext, sectionId: string): ManualBlock {
  const attribute = warning.attribs['warning-type'];
  const warningType = IBIKUS_WARNING_TYPES[attribute];
  if (!warningType) {
    throw new ManualFormatError(context.source, `warning block ${id}: warning-type "${attribute ?? ''}" is not one of ${Object.keys(IBIKUS_WARNING_TYPES).join(', ')}`);
  }
  const paragraphs = children(warning)
    .filter((c) => !SKIPPED.has(c.name))
    .map((c) => collapseSpace(ibikusText(c)))
    .filter(Boolean);
  if (paragraphs.length > 1 && SIGNAL_LINE.test(paragraphs[0])) paragraphs.shift();
  // IBIKUS: a warning sits in a "Safety information" (or similar) section and is about that section's parent
  return { type: 'warning', id, warningType, summary, text: paragraphs.join(' '), topicSectionId: context.parentSectionId ?? sectionId };
}

function tableText(table: Element): string {
  const rows: string[] = [];
  const walk = (el: Element) => {
    for (const child of children(el)) {
      if (child.name === 'row') rows.push(children(child).map((entry) => collapseSpace(ibikusText(entry))).join(' | '));
      else walk(child);
    }
  };
  walk(table);
  return rows.filter((r) => r.replace(/[|\s]/g, '')).join('\n');
}

/** Appends the blocks an element holds to the section (recursing through containers). */
function readBlocks(el: Element, section: ManualSection, context: ReadContext, sectionChildren: ManualSection[]): void {
  for (const child of children(el)) {
    switch (child.name) {
      case 'title':
      case 'toc':
        break;
      case 'section':
        sectionChildren.push(readSection(child, { ...context, parentSectionId: section.id }));
        break;
      case 'action': {
        const steps = children(child)
          .filter((c) => c.name === 'action-step')
          .map((step) => collapseSpace(ibikusText(step)))
          .filter(Boolean);
        if (steps.length) section.blocks.push({ type: 'steps', steps });
        break;
      }
      case 'explanation': {
        const summary = collapseSpace(
          children(child)
            .filter((c) => c.name === 'overview')
            .map((o) => ibikusText(o))
            .join(' '),
        );
        for (const part of children(child)) {
          if (part.name === 'overview') continue;
          readExplanationPart(part, summary, section, context, sectionChildren);
        }
        break;
      }
      case 'background':
        readExplanationPart(child, '', section, context, sectionChildren);
        break;
      case 'warning':
        section.blocks.push(warningBlock(child, child.attribs.id ?? `${section.id}~warning-${++context.generated}`, '', context, section.id));
        break;
      case 'list':
      case 'graphic-with-description':
      case 'legend-dynamic':
      case 'item':
        readBlocks(child, section, context, sectionChildren);
        break;
      case 'table': {
        const text = tableText(child);
        if (text) section.blocks.push({ type: 'text', text });
        break;
      }
      default: {
        if (SKIPPED.has(child.name)) break;
        const text = collapseSpace(ibikusText(child));
        if (text) section.blocks.push({ type: 'text', text });
      }
    }
  }
}

/** A <background> (the long form of an explanation): a warning block, or explanatory text. */
function readExplanationPart(part: Element, summary: string, section: ManualSection, context: ReadContext, sectionChildren: ManualSection[]): void {
  const warning = part.name === 'background' ? children(part).find((c) => c.name === 'warning') : part.name === 'warning' ? part : undefined;
  if (warning) {
    const id = part.attribs.id ?? warning.attribs.id ?? `${section.id}~warning-${++context.generated}`;
    section.blocks.push(warningBlock(warning, id, summary, context, section.id));
    return;
  }
  readBlocks(part, section, context, sectionChildren);
}

function readSection(el: Element, context: ReadContext): ManualSection {
  const title = children(el).find((c) => c.name === 'title');
  const section: ManualSection = {
    id: el.attribs.id ?? `${context.source}#section-${++context.generated}`,
    title: title ? collapseSpace(ibikusText(title, true)) : '',
    blocks: [],
    sections: [],
  };
  readBlocks(el, section, context, section.sections);
  return section;
}

/** Reads an IBIKUS chapter (<chapter-contents> with nested <section>s). */
export function readIbikus(xml: string, source: string, file: string = source): ManualSection[] {
  const document = parseMarkup(xml, file, 'xml');
  const root = document.children.filter(isElement).find((c) => c.name === 'chapter-contents');
  if (!root) throw new ManualFormatError(source, 'not an IBIKUS chapter: expected a <chapter-contents> root element');
  const context: ReadContext = { source, parentSectionId: null, generated: 0 };
  const sections = children(root)
    .filter((c) => c.name === 'section')
    .map((s) => readSection(s, context));
  if (sections.length === 0) throw new ManualFormatError(source, 'the <chapter-contents> holds no <section>');
  return sections;
}
