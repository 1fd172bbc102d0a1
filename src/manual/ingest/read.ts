import { readFile } from 'node:fs/promises';
import { basename, extname } from 'node:path';
import type { ManualFormat, ParsedManual } from '../model.ts';
import { ManualFormatError } from './errors.ts';
import { readHtml } from './html.ts';
import { readIbikus } from './ibikus.ts';
import { readMarkdown } from './markdown.ts';
import { readPdf } from './pdf.ts';

export const MANUAL_EXTENSIONS: Readonly<Record<string, ManualFormat | 'xml'>> = {
  '.xml': 'xml',
  '.md': 'markdown',
  '.markdown': 'markdown',
  '.html': 'html',
  '.htm': 'html',
  '.pdf': 'pdf',
};

/** The format of a manual file, from its extension (and, for .xml, its root element). */
export function manualFormatOf(file: string, head: string): ManualFormat {
  const kind = MANUAL_EXTENSIONS[extname(file).toLowerCase()];
  if (!kind) throw new ManualFormatError(file, `unknown manual format; expected one of ${Object.keys(MANUAL_EXTENSIONS).join(', ')}`);
  if (kind !== 'xml') return kind;
  if (/<chapter-contents[\s>]/.test(head)) return 'ibikus';
  if (/<html[\s>]/i.test(head)) return 'html';
  throw new ManualFormatError(file, 'an XML manual must be an IBIKUS chapter (<chapter-contents> root) or XHTML');
}

/** Reads one manual file of any supported format into its section tree. */
export async function readManualFile(path: string, bytes?: Uint8Array): Promise<ParsedManual & { bytes: Uint8Array }> {
  let data: Uint8Array;
  try {
    data = bytes ?? new Uint8Array(await readFile(path));
  } catch (error) {
    throw new ManualFormatError(path, `cannot read the file: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`);
  }
  const source = basename(path);
  const text = extname(path).toLowerCase() === '.pdf' ? '' : Buffer.from(data).toString('utf8');
  const format = manualFormatOf(path, text.slice(0, 4096));
  const sections =
    format === 'ibikus' ? readIbikus(text, source) : format === 'markdown' ? readMarkdown(text, source) : format === 'html' ? readHtml(text, source) : await readPdf(data, source);
  return { source, format, sections, bytes: data };
}
