/**
 * Strict little readers for the report formats, so tests check well-formedness without a
 * dependency: an XML 1.0 subset (no comments, CDATA or DTD, which the writers never emit) and RFC 4180 CSV.
 */

export interface XmlElement {
  name: string;
  attributes: Record<string, string>;
  children: XmlElement[];
  text: string;
}

const INVALID_XML_CHAR = /[^\t\n\r\u0020-\uD7FF\uE000-\uFFFD\u{10000}-\u{10FFFF}]/u;

function decodeEntities(raw: string, at: number): string {
  if (raw.includes('<')) throw new Error(`XML: raw "<" in text or attribute near offset ${at}`);
  return raw.replace(/&([^;]*);?/g, (match, body: string) => {
    if (!match.endsWith(';')) throw new Error(`XML: unterminated entity "${match}" near offset ${at}`);
    const named: Record<string, string> = { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'" };
    if (body in named) return named[body];
    const numeric = /^#(x[0-9a-fA-F]+|[0-9]+)$/.exec(body);
    if (!numeric) throw new Error(`XML: unknown entity "&${body};" near offset ${at}`);
    const code = numeric[1].startsWith('x') ? parseInt(numeric[1].slice(1), 16) : parseInt(numeric[1], 10);
    const char = String.fromCodePoint(code);
    if (INVALID_XML_CHAR.test(char)) throw new Error(`XML: character reference to a forbidden character near offset ${at}`);
    return char;
  });
}

export function parseXml(xml: string): XmlElement {
  if (INVALID_XML_CHAR.test(xml)) throw new Error('XML: document holds a character XML 1.0 forbids');
  let pos = 0;
  const prolog = /^<\?xml[^?]*\?>\s*/.exec(xml);
  if (prolog) pos = prolog[0].length;
  const stack: XmlElement[] = [];
  let root: XmlElement | null = null;
  while (pos < xml.length) {
    if (xml[pos] !== '<') {
      const end = xml.indexOf('<', pos);
      const raw = xml.slice(pos, end === -1 ? xml.length : end);
      if (stack.length === 0) {
        if (raw.trim()) throw new Error(`XML: text outside the root element at offset ${pos}`);
      } else stack[stack.length - 1].text += decodeEntities(raw, pos);
      pos = end === -1 ? xml.length : end;
      continue;
    }
    if (xml.startsWith('</', pos)) {
      const m = /^<\/([A-Za-z_][\w.-]*)\s*>/.exec(xml.slice(pos));
      if (!m) throw new Error(`XML: bad end tag at offset ${pos}`);
      const open = stack.pop();
      if (!open || open.name !== m[1]) throw new Error(`XML: </${m[1]}> does not close <${open?.name}> at offset ${pos}`);
      pos += m[0].length;
      continue;
    }
    const m = /^<([A-Za-z_][\w.-]*)((?:\s+[A-Za-z_][\w.:-]*\s*=\s*"[^"]*")*)\s*(\/?)>/.exec(xml.slice(pos));
    if (!m) throw new Error(`XML: bad start tag at offset ${pos}: ${xml.slice(pos, pos + 40)}`);
    if (stack.length === 0 && root) throw new Error(`XML: second root element at offset ${pos}`);
    const attributes: Record<string, string> = {};
    for (const a of m[2].matchAll(/([A-Za-z_][\w.:-]*)\s*=\s*"([^"]*)"/g)) {
      if (a[1] in attributes) throw new Error(`XML: duplicate attribute ${a[1]} at offset ${pos}`);
      attributes[a[1]] = decodeEntities(a[2], pos);
    }
    const element: XmlElement = { name: m[1], attributes, children: [], text: '' };
    if (stack.length > 0) stack[stack.length - 1].children.push(element);
    else root = element;
    if (!m[3]) stack.push(element);
    pos += m[0].length;
  }
  if (stack.length > 0) throw new Error(`XML: <${stack[stack.length - 1].name}> is never closed`);
  if (!root) throw new Error('XML: no root element');
  return root;
}

export function findAll(element: XmlElement, name: string): XmlElement[] {
  return [...(element.name === name ? [element] : []), ...element.children.flatMap((c) => findAll(c, name))];
}

/** RFC 4180: fields separated by commas, records by CRLF, quoted fields may hold commas, quotes ("") and line breaks. */
export function parseCsv(text: string): string[][] {
  const rows: string[][] = [];
  let row: string[] = [];
  let field = '';
  let i = 0;
  let quoted = false;
  while (i < text.length) {
    const c = text[i];
    if (quoted) {
      if (c === '"' && text[i + 1] === '"') {
        field += '"';
        i += 2;
      } else if (c === '"') {
        quoted = false;
        i += 1;
        if (i < text.length && text[i] !== ',' && text[i] !== '\r') throw new Error(`CSV: text after a closing quote at ${i}`);
      } else {
        field += c;
        i += 1;
      }
    } else if (c === '"') {
      if (field !== '') throw new Error(`CSV: quote inside an unquoted field at ${i}`);
      quoted = true;
      i += 1;
    } else if (c === ',') {
      row.push(field);
      field = '';
      i += 1;
    } else if (c === '\r' && text[i + 1] === '\n') {
      row.push(field);
      rows.push(row);
      row = [];
      field = '';
      i += 2;
    } else if (c === '\n' || c === '\r') {
      throw new Error(`CSV: bare line break in an unquoted field at ${i}`);
    } else {
      field += c;
      i += 1;
    }
  }
  if (quoted) throw new Error('CSV: unterminated quoted field');
  if (field !== '' || row.length > 0) throw new Error('CSV: last record lacks its CRLF');
  return rows;
}
