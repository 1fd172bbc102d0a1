import { basename, extname } from 'node:path';
import { decodeUtf8, FILE_LIMITS, readBoundedBytes } from '../../domain/input-files.ts';
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

/**
 * Reads one manual file of any supported format into its section tree, through the one bounded
 * reader (at most FILE_LIMITS.manual, UTF-8 only: every problem is `file: what was wrong`).
 */
export async function readManualFile(path: string, bytes?: Uint8Array): Promise<ParsedManual & { bytes: Uint8Array }> {
  // a file of no manual format is refused before a byte of it is read
  if (!MANUAL_EXTENSIONS[extname(path).toLowerCase()]) manualFormatOf(path, '');
  const data = bytes ?? new Uint8Array(readBoundedBytes(path, 'manual file', FILE_LIMITS.manual));
  const text = extname(path).toLowerCase() === '.pdf' ? '' : decodeUtf8(data, path, 'manual file');
  const source = basename(path);
  const format = manualFormatOf(path, text.slice(0, 4096));
  const sections =
    format === 'ibikus' ? readIbikus(text, source, path) : format === 'markdown' ? readMarkdown(text, source, path) : format === 'html' ? readHtml(text, source, path) : await readPdf(data, source, path);
  return { source, format, sections, bytes: data };
}
