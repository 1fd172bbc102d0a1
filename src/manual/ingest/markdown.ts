import type { ManualSection, WarningType } from '../model.ts';
import { SectionBuilder } from './builder.ts';
import { ManualFormatError } from './errors.ts';
import { MAX_MANUAL_NESTING, nestedTooDeeply } from './limits.ts';

/** GitHub alert kinds that are safety blocks (> [!WARNING]); NOTE, TIP and IMPORTANT are not. */
const ALERTS: Readonly<Record<string, WarningType>> = { WARNING: 'Warning', CAUTION: 'Warning', DANGER: 'Danger', NOTICE: 'Notice' };

/** "Title {#id}": a heading or warning with an explicit id. */
function withId(text: string): { text: string; id?: string } {
  // looked for from the last "{#" only: an unanchored pattern would rescan every run of spaces of a long line
  const at = text.lastIndexOf('{#');
  const match = at === -1 ? null : /^\{#([\w.:-]+)\}\s*$/.exec(text.slice(at));
  return match ? { text: text.slice(0, at).trimEnd(), id: match[1] } : { text };
}

/**
 * The text a reader sees of a line of inline Markdown: links and images by their text, emphasis,
 * code and escape marks dropped. No pattern can scan past the next opening of its own kind ("[",
 * "(", "<"), so each replacement is one pass: a 50 MB line costs a few passes, not a backtracking explosion.
 */
export function plainInline(text: string): string {
  return text
    .replace(/!?\[([^[\]\n]*)\](?:\([^()\n]*\)|\[[^[\]\n]*\])/g, '$1')
    .replace(/<((?:https?|mailto):[^<>\s]*)>/g, '$1')
    .replace(/\*\*|__|`/g, '')
    .replace(/(^|[\s(])[*_](?=\S)([^*_\n]*?\S)[*_](?=$|[\s).,;:!?])/g, '$1$2')
    .replace(/\\([!-/:-@[-`{-~])/g, '$1');
}

const FENCE = /^ {0,3}(`{3,}|~{3,})/;
const ATX_HEADING = /^ {0,3}(#{1,6})(?=[ \t]|$)/;
const SETEXT_UNDERLINE = /^ {0,3}(=+|-+)[ \t]*$/;
const THEMATIC_BREAK = /^ {0,3}([-*_])(?:[ \t]*\1){2,}[ \t]*$/;
const LIST_ITEM = /^([-*+]|\d{1,9}[.)])(?:[ \t]+|$)/;
const TABLE_DELIMITER = /^[ \t]*\|?[ \t]*:?-+:?[ \t]*(?:\|[ \t]*:?-+:?[ \t]*)*\|?[ \t]*$/;

/** Leading columns of a line (a tab counts to the next multiple of 4) and where its content starts. */
function indentOf(line: string): { columns: number; at: number } {
  let columns = 0;
  let at = 0;
  for (; at < line.length; at++) {
    if (line[at] === ' ') columns++;
    else if (line[at] === '\t') columns += 4 - (columns % 4);
    else break;
  }
  return { columns, at };
}

/** The text of an ATX heading after its #s: without a closing run of #s (a loop, not a pattern that rescans trailing spaces). */
function headingText(rest: string): string {
  const trimmed = rest.trim();
  let end = trimmed.length;
  while (end > 0 && trimmed[end - 1] === '#') end--;
  return end === 0 ? '' : end < trimmed.length && (trimmed[end - 1] === ' ' || trimmed[end - 1] === '\t') ? trimmed.slice(0, end).trimEnd() : trimmed;
}

/** A list of the document: its items' text (a nested item is part of the item it sits in, as a reader hears it). */
interface OpenList {
  ordered: boolean;
  items: string[];
  /** marker column of each open nesting level (innermost last) */
  levels: number[];
}

/**
 * Reads a Markdown manual: headings make sections (ids from "{#id}" or the heading path),
 * ordered lists are procedures, a blockquote or paragraph that opens with a signal word
 * ("Warning:", "**Danger**") or a GitHub alert (> [!WARNING]) is a warning block.
 *
 * One pass over the lines with an explicit list of open nesting levels: time and memory are linear
 * in the file and nothing recurses, so a 100 MB chapter, a 50 MB line or a list nested thousands
 * of levels deep cannot exhaust the stack (nesting beyond MAX_MANUAL_NESTING is refused by name).
 */
export function readMarkdown(text: string, source: string, file: string = source): ManualSection[] {
  return new MarkdownReader(source, file).read(text);
}

/** The state of one pass over a Markdown file: the blocks still open and the sections built so far. */
class MarkdownReader {
  private readonly builder: SectionBuilder;
  private paragraph: string[] = [];
  private quote: string[] = [];
  private list: OpenList | null = null;
  private code: string[] | null = null;
  private fence: { char: string; length: number } | null = null;
  private table: string[][] | null = null;
  private blankBefore = false;

  constructor(
    source: string,
    private readonly file: string,
  ) {
    this.builder = new SectionBuilder(source);
  }

  read(text: string): ManualSection[] {
    let start = 0;
    for (let lineNumber = 1; start <= text.length; lineNumber++) {
      const newline = text.indexOf('\n', start);
      const end = newline === -1 ? text.length : newline;
      const line = text.slice(start, end > start && text[end - 1] === '\r' ? end - 1 : end);
      start = end + 1;
      this.readLine(line, lineNumber);
    }
    this.flushAll();
    return this.builder.build();
  }

  /** One line: the first rule that claims it wins, in the order a Markdown reader gives them precedence. */
  private readLine(line: string, lineNumber: number): void {
    if (this.fence) return this.readFencedLine(line);
    if (line.trim() === '') return this.readBlankLine();
    const indent = indentOf(line);
    const content = line.slice(indent.at);
    if (this.continuesIndentedBlock(indent, content)) return;
    this.flushCode();
    if (this.opensBlock(line, indent, content, lineNumber)) return;
    this.readTextLine(line, indent, content);
  }

  private readFencedLine(line: string): void {
    const fence = this.fence!;
    const closing = FENCE.exec(line);
    if (closing && closing[1][0] === fence.char && closing[1].length >= fence.length && line.trim() === closing[1]) {
      this.fence = null;
      this.flushCode();
    } else this.code!.push(line);
  }

  private readBlankLine(): void {
    this.flushParagraph();
    this.flushQuote();
    this.flushTable();
    if (this.code) this.code.push('');
    this.blankBefore = true;
  }

  /** A line indented into the open list item or the open indented code block; false if neither claims it. */
  private continuesIndentedBlock(indent: { columns: number }, content: string): boolean {
    // a list continues while its lines are indented into an item (a nested item is part of its parent item)
    if (this.list && indent.columns > this.list.levels[0] && !LIST_ITEM.test(content)) {
      this.list.items[this.list.items.length - 1] += `\n${content}`;
      this.blankBefore = false;
      return true;
    }
    if (this.code && indent.columns >= 4 && !this.list) {
      this.code.push(content);
      return true;
    }
    return false;
  }

  /** A line that opens a block of its own (fence, heading, break, quote, list item); false if it does not. */
  private opensBlock(line: string, indent: { columns: number }, content: string, lineNumber: number): boolean {
    const opening = FENCE.exec(line);
    if (opening) {
      this.flushAll();
      this.fence = { char: opening[1][0], length: opening[1].length };
      this.code = [];
      return true;
    }
    const heading = ATX_HEADING.exec(line);
    if (heading) {
      this.flushAll();
      const { text: title, id } = withId(plainInline(headingText(line.slice(heading[0].length))));
      this.builder.heading(heading[1].length, title, id);
      return true;
    }
    if (this.paragraph.length && !this.blankBefore && SETEXT_UNDERLINE.test(line)) {
      const { text: title, id } = withId(plainInline(this.paragraph.join(' ')));
      this.paragraph = [];
      this.builder.heading(line.trim()[0] === '=' ? 1 : 2, title, id);
      return true;
    }
    if (THEMATIC_BREAK.test(line)) {
      this.flushAll();
      return true;
    }
    if (indent.columns < 4 && content[0] === '>') {
      this.readQuoteLine(content, lineNumber);
      return true;
    }
    const item = LIST_ITEM.exec(content);
    if (item && (indent.columns < 4 || this.list)) {
      this.readListItem(item, indent, content, lineNumber);
      return true;
    }
    return false;
  }

  private readQuoteLine(content: string, lineNumber: number): void {
    this.flushParagraph();
    this.flushList();
    this.flushTable();
    // strip every ">" marker of the line; their count is the quote's nesting
    let at = 0;
    let depth = 0;
    while (at < content.length && content[at] === '>') {
      depth++;
      if (depth > MAX_MANUAL_NESTING) throw new ManualFormatError(this.file, nestedTooDeeply(`line ${lineNumber} (a blockquote)`));
      at++;
      while (content[at] === ' ' || content[at] === '\t') at++;
    }
    this.quote.push(content.slice(at));
    this.blankBefore = false;
  }

  private readListItem(item: RegExpExecArray, indent: { columns: number }, content: string, lineNumber: number): void {
    this.flushParagraph();
    this.flushQuote();
    this.flushTable();
    const ordered = /\d/.test(item[1][0]);
    let list = this.list;
    if (list && indent.columns > list.levels[list.levels.length - 1]) {
      // a nested item: one level deeper, its text part of the item it sits in
      list.levels.push(indent.columns);
      if (list.levels.length > MAX_MANUAL_NESTING) throw new ManualFormatError(this.file, nestedTooDeeply(`line ${lineNumber} (a list)`));
      list.items[list.items.length - 1] += `\n${content.slice(item[0].length)}`;
    } else {
      while (list && list.levels.length > 1 && indent.columns < list.levels[list.levels.length - 1]) list.levels.pop();
      if (list && list.levels.length > 1) list.items[list.items.length - 1] += `\n${content.slice(item[0].length)}`;
      else {
        if (list && list.ordered !== ordered) {
          this.flushList();
          list = null;
        }
        list ??= { ordered, items: [], levels: [indent.columns] };
        this.list = list;
        list.items.push(content.slice(item[0].length));
      }
    }
    this.blankBefore = false;
  }

  /** A line of running text: a lazy continuation, a table row, indented code or a paragraph line. */
  private readTextLine(line: string, indent: { columns: number }, content: string): void {
    if (this.list && !this.blankBefore) {
      // a lazy continuation line of the last item
      this.list.items[this.list.items.length - 1] += `\n${content}`;
      return;
    }
    this.flushList();
    if (this.quote.length && !this.blankBefore) {
      // a lazy continuation line of the quote's paragraph
      this.quote.push(content);
      return;
    }
    if (this.table) {
      if (content.includes('|')) {
        this.table.push(cells(content));
        return;
      }
      this.flushTable();
    }
    if (this.paragraph.length === 1 && this.paragraph[0].includes('|') && TABLE_DELIMITER.test(line) && line.includes('-')) {
      this.table = [cells(this.paragraph[0])];
      this.paragraph = [];
      return;
    }
    if (!this.paragraph.length && indent.columns >= 4) {
      this.code = [content];
      return;
    }
    this.paragraph.push(content);
    this.blankBefore = false;
  }

  private flushParagraph(): void {
    if (this.paragraph.length) {
      const { text: body, id } = withId(plainInline(this.paragraph.join('\n')));
      this.builder.paragraph(body, id);
    }
    this.paragraph = [];
  }

  private flushQuote(): void {
    if (!this.quote.length) return;
    const body = plainInline(this.quote.join('\n')).trim();
    this.quote = [];
    const alert = /^\[!(\w+)\]\s*/.exec(body);
    if (alert && ALERTS[alert[1].toUpperCase()]) {
      const { text: rest, id } = withId(body.slice(alert[0].length));
      this.builder.warning(ALERTS[alert[1].toUpperCase()], rest, id);
    } else if (alert) {
      this.builder.text(body.slice(alert[0].length));
    } else {
      const { text: rest, id } = withId(body);
      this.builder.paragraph(rest, id);
    }
  }

  private flushList(): void {
    if (!this.list) return;
    const items = this.list.items.map(plainInline);
    if (this.list.ordered) this.builder.steps(items);
    else items.forEach((item) => this.builder.paragraph(item));
    this.list = null;
  }

  private flushCode(): void {
    if (this.code?.length) this.builder.text(this.code.join('\n'));
    this.code = null;
  }

  private flushTable(): void {
    if (this.table) this.builder.text(this.table.map((row) => row.map(plainInline).join(' | ')).join('\n'));
    this.table = null;
  }

  private flushAll(): void {
    this.flushParagraph();
    this.flushQuote();
    this.flushList();
    this.flushCode();
    this.flushTable();
  }
}

/** The cells of a table row, its outer pipes dropped. */
function cells(line: string): string[] {
  return line
    .trim()
    .replace(/^\||\|$/g, '')
    .split('|')
    .map((cell) => cell.trim());
}
