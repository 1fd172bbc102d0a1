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
  const builder = new SectionBuilder(source);
  let paragraph: string[] = [];
  let quote: string[] = [];
  let list: OpenList | null = null;
  let code: string[] | null = null;
  let fence: { char: string; length: number } | null = null;
  let table: string[][] | null = null;
  let blankBefore = false;

  const flushParagraph = () => {
    if (paragraph.length) {
      const { text: body, id } = withId(plainInline(paragraph.join('\n')));
      builder.paragraph(body, id);
    }
    paragraph = [];
  };
  const flushQuote = () => {
    if (!quote.length) return;
    const body = plainInline(quote.join('\n')).trim();
    quote = [];
    const alert = /^\[!(\w+)\]\s*/.exec(body);
    if (alert && ALERTS[alert[1].toUpperCase()]) {
      const { text: rest, id } = withId(body.slice(alert[0].length));
      builder.warning(ALERTS[alert[1].toUpperCase()], rest, id);
    } else if (alert) {
      builder.text(body.slice(alert[0].length));
    } else {
      const { text: rest, id } = withId(body);
      builder.paragraph(rest, id);
    }
  };
  const flushList = () => {
    if (!list) return;
    const items = list.items.map(plainInline);
    if (list.ordered) builder.steps(items);
    else items.forEach((item) => builder.paragraph(item));
    list = null;
  };
  const flushCode = () => {
    if (code?.length) builder.text(code.join('\n'));
    code = null;
  };
  const flushTable = () => {
    if (table) builder.text(table.map((row) => row.map(plainInline).join(' | ')).join('\n'));
    table = null;
  };
  const flushAll = () => {
    flushParagraph();
    flushQuote();
    flushList();
    flushCode();
    flushTable();
  };
  const cells = (line: string) =>
    line
      .trim()
      .replace(/^\||\|$/g, '')
      .split('|')
      .map((cell) => cell.trim());

  let start = 0;
  for (let lineNumber = 1; start <= text.length; lineNumber++) {
    const newline = text.indexOf('\n', start);
    const end = newline === -1 ? text.length : newline;
    const line = text.slice(start, end > start && text[end - 1] === '\r' ? end - 1 : end);
    start = end + 1;

    if (fence) {
      const closing = FENCE.exec(line);
      if (closing && closing[1][0] === fence.char && closing[1].length >= fence.length && line.trim() === closing[1]) {
        fence = null;
        flushCode();
      } else code!.push(line);
      continue;
    }
    if (line.trim() === '') {
      flushParagraph();
      flushQuote();
      flushTable();
      if (code) code.push('');
      blankBefore = true;
      continue;
    }
    const indent = indentOf(line);
    const content = line.slice(indent.at);

    // a list continues while its lines are indented into an item (a nested item is part of its parent item)
    if (list && indent.columns > list.levels[0] && !LIST_ITEM.test(content)) {
      list.items[list.items.length - 1] += `\n${content}`;
      blankBefore = false;
      continue;
    }
    if (code && indent.columns >= 4 && !list) {
      code.push(content);
      continue;
    }
    flushCode();

    const opening = FENCE.exec(line);
    if (opening) {
      flushAll();
      fence = { char: opening[1][0], length: opening[1].length };
      code = [];
      continue;
    }
    const heading = ATX_HEADING.exec(line);
    if (heading) {
      flushAll();
      const { text: title, id } = withId(plainInline(headingText(line.slice(heading[0].length))));
      builder.heading(heading[1].length, title, id);
      continue;
    }
    if (paragraph.length && !blankBefore && SETEXT_UNDERLINE.test(line)) {
      const { text: title, id } = withId(plainInline(paragraph.join(' ')));
      paragraph = [];
      builder.heading(line.trim()[0] === '=' ? 1 : 2, title, id);
      continue;
    }
    if (THEMATIC_BREAK.test(line)) {
      flushAll();
      continue;
    }
    if (indent.columns < 4 && content[0] === '>') {
      flushParagraph();
      flushList();
      flushTable();
      // strip every ">" marker of the line; their count is the quote's nesting
      let at = 0;
      let depth = 0;
      while (at < content.length && content[at] === '>') {
        depth++;
        if (depth > MAX_MANUAL_NESTING) throw new ManualFormatError(file, nestedTooDeeply(`line ${lineNumber} (a blockquote)`));
        at++;
        while (content[at] === ' ' || content[at] === '\t') at++;
      }
      quote.push(content.slice(at));
      blankBefore = false;
      continue;
    }
    const item = LIST_ITEM.exec(content);
    if (item && (indent.columns < 4 || list)) {
      flushParagraph();
      flushQuote();
      flushTable();
      const ordered = /\d/.test(item[1][0]);
      if (list && indent.columns > list.levels[list.levels.length - 1]) {
        // a nested item: one level deeper, its text part of the item it sits in
        list.levels.push(indent.columns);
        if (list.levels.length > MAX_MANUAL_NESTING) throw new ManualFormatError(file, nestedTooDeeply(`line ${lineNumber} (a list)`));
        list.items[list.items.length - 1] += `\n${content.slice(item[0].length)}`;
      } else {
        while (list && list.levels.length > 1 && indent.columns < list.levels[list.levels.length - 1]) list.levels.pop();
        if (list && list.levels.length > 1) list.items[list.items.length - 1] += `\n${content.slice(item[0].length)}`;
        else {
          if (list && list.ordered !== ordered) flushList();
          list ??= { ordered, items: [], levels: [indent.columns] };
          list.items.push(content.slice(item[0].length));
        }
      }
      blankBefore = false;
      continue;
    }
    if (list && !blankBefore) {
      // a lazy continuation line of the last item
      list.items[list.items.length - 1] += `\n${content}`;
      continue;
    }
    flushList();
    if (quote.length && !blankBefore) {
      // a lazy continuation line of the quote's paragraph
      quote.push(content);
      continue;
    }
    if (table) {
      if (content.includes('|')) {
        table.push(cells(content));
        continue;
      }
      flushTable();
    }
    if (paragraph.length === 1 && paragraph[0].includes('|') && TABLE_DELIMITER.test(line) && line.includes('-')) {
      table = [cells(paragraph[0])];
      paragraph = [];
      continue;
    }
    if (!paragraph.length && indent.columns >= 4) {
      code = [content];
      continue;
    }
    paragraph.push(content);
    blankBefore = false;
  }
  flushAll();
  return builder.build();
}
