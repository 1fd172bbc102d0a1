import { textLines, type NumberedLine } from './input-files.ts';

/** A CSV text that cannot be read as rows; `line` is where the problem starts. */
export class CsvError extends Error {
  constructor(
    readonly line: number,
    message: string,
  ) {
    super(message);
    this.name = 'CsvError';
  }
}

/**
 * RFC 4180 CSV: quoted fields may hold commas, quotes ("") and line breaks. Returns rows with their starting line.
 * A quoted field still open at the end of the text is a CsvError naming the line it opened on: reading on would
 * swallow every row after it into one field.
 */
export function parseCsv(text: string): Array<{ line: number; fields: string[] }> {
  return [...csvRecords(textLines(text))];
}

/**
 * parseCsv over lines as they are read (a file is never one string): rows with their starting line, a quoted field
 * running on over the line breaks inside it (each kept as "\n"). Rows whose fields are all empty are skipped.
 */
export function* csvRecords(lines: Iterable<NumberedLine>): Generator<{ line: number; fields: string[] }> {
  let fields: string[] = [];
  let field = '';
  let quoted = false;
  let rowLine = 1;
  let quoteLine = 1;
  for (const { text, number } of lines) {
    if (quoted) field += '\n';
    else rowLine = number;
    for (let i = 0; i < text.length; i++) {
      const c = text[i];
      if (quoted) {
        if (c === '"' && text[i + 1] === '"') {
          field += '"';
          i++;
        } else if (c === '"') quoted = false;
        else field += c;
      } else if (c === '"') {
        quoted = true;
        quoteLine = number;
      } else if (c === ',') {
        fields.push(field);
        field = '';
      } else field += c;
    }
    if (quoted) continue;
    fields.push(field);
    if (fields.some((f) => f !== '')) yield { line: rowLine, fields };
    fields = [];
    field = '';
  }
  if (quoted) throw new CsvError(quoteLine, 'a quoted field opened on this line is never closed (expected a closing "; a " inside a quoted field is written "")');
}
