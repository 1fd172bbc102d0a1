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
  const rows: Array<{ line: number; fields: string[] }> = [];
  let fields: string[] = [];
  let field = '';
  let quoted = false;
  let line = 1;
  let rowLine = 1;
  let quoteLine = 1;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (quoted) {
      if (c === '"' && text[i + 1] === '"') {
        field += '"';
        i++;
      } else if (c === '"') quoted = false;
      else {
        if (c === '\n') line++;
        field += c;
      }
    } else if (c === '"') {
      quoted = true;
      quoteLine = line;
    }
    else if (c === ',') {
      fields.push(field);
      field = '';
    } else if (c === '\n' || c === '\r') {
      if (c === '\r' && text[i + 1] === '\n') i++;
      fields.push(field);
      if (fields.some((f) => f !== '')) rows.push({ line: rowLine, fields });
      fields = [];
      field = '';
      line++;
      rowLine = line;
    } else field += c;
  }
  if (quoted) throw new CsvError(quoteLine, 'a quoted field opened on this line is never closed (expected a closing "; a " inside a quoted field is written "")');
  fields.push(field);
  if (fields.some((f) => f !== '')) rows.push({ line: rowLine, fields });
  return rows;
}
