import type { ManualChunk, ManualSection, ParsedManual } from './model.ts';

/**
 * Turns a manual's section tree into chunks: per section one chunk of its running text, one per
 * procedure (its steps whole, in order) and one per warning block (whole, with its id and type).
 * Every chunk carries the headings above it, so a chunk read alone still says where it stands.
 */
export function chunkManual(manual: ParsedManual): ManualChunk[] {
  const chunks: ManualChunk[] = [];
  const visit = (section: ManualSection, path: readonly string[], parentSectionId: string | null, chapter: string) => {
    const headingPath = section.title ? [...path, section.title] : [...path];
    const base = { source: manual.source, chapter, sectionId: section.id, headingPath, parentSectionId };
    const text = section.blocks.flatMap((b) => (b.type === 'text' ? [b.text] : []));
    if (text.length) chunks.push({ ...base, id: section.id, kind: 'section', text: text.join('\n'), steps: [], warningType: null, topicSectionId: null, summary: '' });
    let procedures = 0;
    for (const block of section.blocks) {
      if (block.type === 'steps') {
        procedures++;
        chunks.push({
          ...base,
          id: `${section.id}#steps${procedures > 1 ? `-${procedures}` : ''}`,
          kind: 'procedure',
          text: block.steps.map((s, i) => `${i + 1}. ${s}`).join('\n'),
          steps: block.steps,
          warningType: null,
          topicSectionId: null,
          summary: '',
        });
      } else if (block.type === 'warning') {
        chunks.push({ ...base, id: block.id, kind: 'warning', text: block.text, steps: [], warningType: block.warningType, topicSectionId: block.topicSectionId, summary: block.summary });
      }
    }
    for (const child of section.sections) visit(child, headingPath, section.id, chapter);
  };
  for (const section of manual.sections) visit(section, [], null, section.title || manual.source);
  return chunks;
}
