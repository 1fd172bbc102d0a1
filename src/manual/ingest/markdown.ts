import { marked, type Token, type Tokens } from 'marked';
import type { ManualSection, WarningType } from '../model.ts';
import { SectionBuilder } from './builder.ts';

/** GitHub alert kinds that are safety blocks (> [!WARNING]); NOTE, TIP and IMPORTANT are not. */
const ALERTS: Readonly<Record<string, WarningType>> = { WARNING: 'Warning', CAUTION: 'Warning', DANGER: 'Danger', NOTICE: 'Notice' };

/** "Title {#id}": a heading or warning with an explicit id. */
function withId(text: string): { text: string; id?: string } {
  const match = /\s*\{#([\w.:-]+)\}\s*$/.exec(text);
  return match ? { text: text.slice(0, match.index), id: match[1] } : { text };
}

function plain(tokens: readonly Token[] | undefined, fallback: string): string {
  if (!tokens) return fallback;
  return tokens.map((t) => ('tokens' in t && t.tokens ? plain(t.tokens, '') : t.type === 'br' ? ' ' : 'text' in t ? String(t.text) : t.raw)).join('');
}

/**
 * Reads a Markdown manual: headings make sections (ids from "{#id}" or the heading path),
 * ordered lists are procedures, a blockquote or paragraph that opens with a signal word
 * ("Warning:", "**Danger**") or a GitHub alert (> [!WARNING]) is a warning block.
 */
export function readMarkdown(text: string, source: string): ManualSection[] {
  const builder = new SectionBuilder(source);
  const visit = (tokens: readonly Token[]) => {
    for (const token of tokens) {
      switch (token.type) {
        case 'heading': {
          const heading = token as Tokens.Heading;
          const { text: title, id } = withId(plain(heading.tokens, heading.text));
          builder.heading(heading.depth, title, id);
          break;
        }
        case 'paragraph': {
          const { text: body, id } = withId(plain((token as Tokens.Paragraph).tokens, (token as Tokens.Paragraph).text));
          builder.paragraph(body, id);
          break;
        }
        case 'list': {
          const list = token as Tokens.List;
          const items = list.items.map((item) => plain(item.tokens, item.text));
          if (list.ordered) builder.steps(items);
          else items.forEach((item) => builder.paragraph(item));
          break;
        }
        case 'blockquote': {
          const quote = token as Tokens.Blockquote;
          const body = plain(quote.tokens, quote.text).trim();
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
          break;
        }
        case 'table': {
          const table = token as Tokens.Table;
          const rows = [table.header.map((c) => c.text), ...table.rows.map((r) => r.map((c) => c.text))];
          builder.text(rows.map((r) => r.join(' | ')).join('\n'));
          break;
        }
        case 'code':
        case 'text':
          builder.text((token as Tokens.Text).text);
          break;
        default:
          break;
      }
    }
  };
  visit(marked.lexer(text));
  return builder.build();
}

