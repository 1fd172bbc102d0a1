import type { ManualChunk, ManualIndex } from './model.ts';

/**
 * Lookups over an index: chunks by id and by section, and which warnings guard a section. A
 * warning guards its topic section and the topic's direct subsections (so a warning in
 * "Lane keeping > Safety information" guards "Lane keeping > Switching on/off").
 */
export class ManualCorpus {
  readonly chunks: readonly ManualChunk[];
  private readonly byId = new Map<string, ManualChunk>();
  private readonly bySection = new Map<string, ManualChunk[]>();
  private readonly warningsByTopic = new Map<string, ManualChunk[]>();
  private readonly parentOf = new Map<string, string | null>();

  constructor(readonly index: ManualIndex) {
    this.chunks = index.chunks;
    for (const chunk of index.chunks) {
      this.byId.set(chunk.id, chunk);
      const list = this.bySection.get(chunk.sectionId) ?? [];
      list.push(chunk);
      this.bySection.set(chunk.sectionId, list);
      this.parentOf.set(chunk.sectionId, chunk.parentSectionId);
      if (chunk.kind === 'warning' && chunk.topicSectionId) {
        const guarded = this.warningsByTopic.get(chunk.topicSectionId) ?? [];
        guarded.push(chunk);
        this.warningsByTopic.set(chunk.topicSectionId, guarded);
      }
    }
  }

  chunk(id: string): ManualChunk | undefined {
    return this.byId.get(id);
  }

  sectionChunks(sectionId: string): readonly ManualChunk[] {
    return this.bySection.get(sectionId) ?? [];
  }

  warnings(): ManualChunk[] {
    return this.chunks.filter((c) => c.kind === 'warning');
  }

  /** Warnings about this section: its own topic warnings and those of its parent section. */
  warningsGuarding(sectionId: string): ManualChunk[] {
    const parent = this.parentOf.get(sectionId) ?? null;
    const own = this.warningsByTopic.get(sectionId) ?? [];
    const inherited = parent ? (this.warningsByTopic.get(parent) ?? []) : [];
    return [...own, ...inherited.filter((w) => !own.includes(w))];
  }

  /** Heading path of a warning's topic (the warning's own path without its "Safety information" section when the topic is the parent). */
  topicHeadingPath(warning: ManualChunk): string[] {
    return warning.topicSectionId !== warning.sectionId ? warning.headingPath.slice(0, -1) : warning.headingPath;
  }
}
