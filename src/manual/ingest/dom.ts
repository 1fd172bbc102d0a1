import { DomHandler, Parser } from 'htmlparser2';
import type { Document } from 'domhandler';
import { ManualFormatError } from './errors.ts';
import { MAX_MANUAL_NESTING, nestedTooDeeply } from './limits.ts';

/**
 * Parses an HTML or XML manual into its element tree, refusing nesting beyond MAX_MANUAL_NESTING as
 * the elements open: the readers recurse through elements, and the parser's own list of open
 * elements costs time per level, so a file nested 100,000 deep is stopped at the limit, by name and
 * line, instead of taking minutes or exhausting the stack.
 */
export function parseMarkup(text: string, file: string, mode: 'html' | 'xml'): Document {
  let depth = 0;
  const handler = new DomHandler(undefined, { withStartIndices: true });
  const open = handler.onopentag.bind(handler);
  const close = handler.onclosetag.bind(handler);
  /** where each open element started (XML: an element the file never closes is refused by name and line) */
  const opened: number[] = [];
  handler.onopentag = (name, attribs) => {
    if (++depth > MAX_MANUAL_NESTING) throw new ManualFormatError(file, nestedTooDeeply(`line ${lineAt(text, parser.startIndex)} (<${name}>)`));
    opened.push(parser.startIndex);
    open(name, attribs);
  };
  // the parser passes the element's name and whether the file closed it itself (DomHandler's own type omits them)
  (handler as unknown as { onclosetag: (name: string, isImplied: boolean) => void }).onclosetag = (name, isImplied) => {
    const start = opened.pop() ?? 0;
    // HTML closes elements implicitly by design; XML that leaves one open is cut off or broken, and reading it would lose what follows
    const selfClosing = text[parser.endIndex] === '>' && text[parser.endIndex - 1] === '/';
    if (mode === 'xml' && isImplied && !selfClosing) throw new ManualFormatError(file, `line ${lineAt(text, start)}: element <${name}> is never closed (expected </${name}> before the end of the file; the XML is truncated or unbalanced)`);
    depth--;
    close();
  };
  const parser = new Parser(handler, { xmlMode: mode === 'xml', decodeEntities: true });
  parser.end(text);
  return handler.root;
}

function lineAt(text: string, offset: number): number {
  let line = 1;
  for (let at = text.indexOf('\n'); at !== -1 && at < offset; at = text.indexOf('\n', at + 1)) line++;
  return line;
}
