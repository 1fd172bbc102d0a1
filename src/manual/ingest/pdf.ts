import type { ManualSection } from '../model.ts';
import { SectionBuilder, signalWordBlock } from './builder.ts';
import { ManualFormatError } from './errors.ts';

interface Line {
  text: string;
  size: number;
  y: number;
  page: number;
}

interface PdfTextItem {
  str: string;
  transform: number[];
  height: number;
  hasEOL?: boolean;
}

/** Text lines of every page, top to bottom, with their font size (the tallest item on the line). */
async function pdfLines(bytes: Uint8Array, file: string): Promise<Line[]> {
  const { getDocumentProxy } = await import('unpdf');
  let pdf;
  try {
    // verbosity 0: pdf.js's own warnings ("Indexing all PDF objects") stay off stderr, so the refusal below is its first line
    pdf = await getDocumentProxy(bytes, { verbosity: 0 });
  } catch (error) {
    throw new ManualFormatError(file, `not a readable PDF: ${(error as Error).message}`);
  }
  const lines: Line[] = [];
  for (let page = 1; page <= pdf.numPages; page++) {
    const content = await (await pdf.getPage(page)).getTextContent();
    const byY = new Map<number, { items: PdfTextItem[] }>();
    for (const item of content.items as PdfTextItem[]) {
      if (typeof item.str !== 'string' || !item.str.trim()) continue;
      const y = Math.round(item.transform[5]);
      const row = byY.get(y) ?? { items: [] };
      row.items.push(item);
      byY.set(y, row);
    }
    for (const [y, row] of [...byY.entries()].sort((a, b) => b[0] - a[0])) {
      row.items.sort((a, b) => a.transform[4] - b.transform[4]);
      lines.push({ text: row.items.map((i) => i.str).join(' ').replace(/\s+/g, ' ').trim(), size: row.items.reduce((largest, i) => Math.max(largest, Math.abs(i.height) || Math.abs(i.transform[3])), 0), y, page });
    }
  }
  await pdf.destroy();
  return lines;
}

const STEP = /^(\d{1,2})[.)]\s+(.*)$/;

/**
 * Reads a PDF manual from its text layer (PDF has no structure markup, so this is layout
 * heuristics, documented in docs/manual-qa.md): lines in a font larger than the body text are
 * headings (the larger, the higher the level); lines "1. …", "2. …" are a procedure's steps; a
 * paragraph opening with a signal word (Danger, Warning, Caution, Notice) is a warning block up
 * to the next heading, step or vertical gap. A scanned PDF without a text layer is an error.
 */
export async function readPdf(bytes: Uint8Array, source: string, file: string): Promise<ManualSection[]> {
  const lines = await pdfLines(bytes, file);
  if (lines.length === 0) throw new ManualFormatError(file, 'the PDF has no text layer (a scan?); run OCR first or use the manual in another format');
  const weight = new Map<number, number>();
  for (const line of lines) weight.set(line.size, (weight.get(line.size) ?? 0) + line.text.length);
  const body = [...weight.entries()].sort((a, b) => b[1] - a[1])[0][0];
  const headingSizes = [...new Set(lines.map((l) => l.size).filter((s) => s > body * 1.15))].sort((a, b) => b - a);

  const builder = new SectionBuilder(source);
  let paragraph: string[] = [];
  let steps: string[] = [];
  let previous: Line | null = null;
  const flushParagraph = () => {
    if (paragraph.length) builder.paragraph(paragraph.join(' '));
    paragraph = [];
  };
  const flushSteps = () => {
    if (steps.length) builder.steps(steps);
    steps = [];
  };
  for (const line of lines) {
    const gap = previous && previous.page === line.page ? previous.y - line.y : Infinity;
    const newBlock = gap > line.size * 1.6;
    const level = headingSizes.indexOf(line.size);
    if (level >= 0) {
      flushParagraph();
      flushSteps();
      builder.heading(level + 1, line.text);
    } else if (STEP.test(line.text)) {
      flushParagraph();
      steps.push(STEP.exec(line.text)![2]);
    } else if (steps.length && !newBlock && !signalWordBlock(line.text)) {
      steps[steps.length - 1] += ` ${line.text}`;
    } else {
      flushSteps();
      if (newBlock || signalWordBlock(line.text)) flushParagraph();
      paragraph.push(line.text);
    }
    previous = line;
  }
  flushParagraph();
  flushSteps();
  return builder.build();
}
