import type { ManualBlock, ManualSection, WarningType } from '../model.ts';

/**
 * Signal words that open a safety block in manuals written as plain documents (Markdown, HTML,
 * PDF), as in ANSI Z535 / ISO 3864: Danger, Warning, Caution, Notice. "Note" and "Tip" are not
 * safety blocks. Caution is mapped to Warning, the manual's own three-level scheme.
 */
export const SIGNAL_WORDS: Readonly<Record<string, WarningType>> = {
  danger: 'Danger',
  warning: 'Warning',
  caution: 'Warning',
  notice: 'Notice',
};

/** "Warning: text", "WARNING – text", "Danger! text" → the type and the text after the signal word. */
export function signalWordBlock(text: string): { warningType: WarningType; text: string } | null {
  const match = /^\s*(?:\*\*|__)?(danger|warning|caution|notice)(?:\*\*|__)?\s*(?:[:!–—-]|$)\s*(?:\*\*|__)?\s*/i.exec(text);
  if (!match) return null;
  return { warningType: SIGNAL_WORDS[match[1].toLowerCase()], text: text.slice(match[0].length).trim() };
}

export function collapseSpace(text: string): string {
  return text.replace(/\s+/g, ' ').trim();
}

function slug(text: string): string {
  return (
    text
      .toLowerCase()
      .normalize('NFKD')
      .replace(/[^\w\s-]/g, '')
      .trim()
      .replace(/[\s_]+/g, '-')
      .slice(0, 60) || 'section'
  );
}

/**
 * Builds the section tree of a document whose structure is its headings (Markdown, HTML, PDF):
 * a heading opens a section at its level; text, steps and warnings go to the open section.
 * Ids come from the document when it has them, else from the heading path (made unique).
 * A warning is about the section it appears in.
 */
export class SectionBuilder {
  private readonly roots: ManualSection[] = [];
  private readonly stack: Array<{ level: number; section: ManualSection; path: string }> = [];
  private readonly used = new Set<string>();
  private warningsSeen = new Map<string, number>();

  constructor(private readonly source: string) {}

  private uniqueId(wanted: string): string {
    let id = wanted;
    for (let n = 2; this.used.has(id); n++) id = `${wanted}-${n}`;
    this.used.add(id);
    return id;
  }

  heading(level: number, title: string, id?: string): void {
    while (this.stack.length && this.stack[this.stack.length - 1].level >= level) this.stack.pop();
    // below a heading with its own id, ids continue from that id
    const parentPath = this.stack.length ? this.stack[this.stack.length - 1].section.id : '';
    const path = parentPath ? `${parentPath}/${slug(title)}` : slug(title);
    const section: ManualSection = { id: this.uniqueId(id?.trim() || path), title: collapseSpace(title), blocks: [], sections: [] };
    if (this.stack.length) this.stack[this.stack.length - 1].section.sections.push(section);
    else this.roots.push(section);
    this.stack.push({ level, section, path });
  }

  private current(): ManualSection {
    if (!this.stack.length) this.heading(0, this.source.replace(/\.[^.]+$/, ''));
    return this.stack[this.stack.length - 1].section;
  }

  text(text: string): void {
    const clean = collapseSpace(text);
    if (clean) this.current().blocks.push({ type: 'text', text: clean });
  }

  steps(steps: readonly string[]): void {
    const clean = steps.map(collapseSpace).filter(Boolean);
    if (clean.length) this.current().blocks.push({ type: 'steps', steps: clean });
  }

  warning(warningType: WarningType, text: string, id?: string, summary = ''): void {
    const section = this.current();
    const n = (this.warningsSeen.get(section.id) ?? 0) + 1;
    this.warningsSeen.set(section.id, n);
    const block: ManualBlock = { type: 'warning', id: this.uniqueId(id?.trim() || `${section.id}~warning-${n}`), warningType, summary: collapseSpace(summary), text: collapseSpace(text), topicSectionId: section.id };
    section.blocks.push(block);
  }

  /** a text block, or a warning block when it opens with a signal word */
  paragraph(text: string, id?: string): void {
    const signal = signalWordBlock(text);
    if (signal && signal.text) this.warning(signal.warningType, signal.text, id);
    else this.text(text);
  }

  build(): ManualSection[] {
    return this.roots;
  }
}
