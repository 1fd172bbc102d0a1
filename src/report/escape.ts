/** Escaping for the report formats: one place, so every writer gets it right the same way. */

const HTML_ENTITIES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };

export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => HTML_ENTITIES[c]);
}

/**
 * Escapes text for XML content and attribute values. Characters XML 1.0 forbids (control
 * characters, lone surrogates, U+FFFE/U+FFFF) are replaced by U+FFFD, since no escape can carry them.
 */
export function escapeXml(text: string): string {
  return text
    .replace(/[^\t\n\r\u0020-\uD7FF\uE000-\uFFFD\u{10000}-\u{10FFFF}]/gu, '\uFFFD')
    .replace(/[&<>"']/g, (c) => (c === "'" ? '&apos;' : HTML_ENTITIES[c]))
    .replace(/\r/g, '&#13;');
}

/**
 * One CSV field (RFC 4180): quoted when it holds a comma, quote, line break or edge spaces.
 * Text starting with = + - @ gets a leading apostrophe, so a spreadsheet shows it instead of
 * evaluating it as a formula (the conversation text comes from the device under test).
 */
export function csvField(value: string | number | boolean | null): string {
  if (value === null) return '';
  if (typeof value !== 'string') return String(value);
  const text = /^[=+\-@\t\r]/.test(value) ? `'${value}` : value;
  return /[",\r\n]|^\s|\s$/.test(text) ? `"${text.replace(/"/g, '""')}"` : text;
}

export function csvRow(values: readonly (string | number | boolean | null)[]): string {
  return `${values.map(csvField).join(',')}\r\n`;
}

/** JSON safe to place inside a <script> element: no "</script>" or "<!--" can end or alter it. */
export function jsonForScript(value: unknown): string {
  return JSON.stringify(value).replace(/</g, '\\u003c').replace(/\u2028/g, '\\u2028').replace(/\u2029/g, '\\u2029');
}

/** escapeXml for attribute values: line breaks and tabs as references, which attribute normalisation would otherwise turn into spaces. */
export function escapeXmlAttribute(text: string): string {
  return escapeXml(text).replace(/\n/g, '&#10;').replace(/\t/g, '&#9;');
}
