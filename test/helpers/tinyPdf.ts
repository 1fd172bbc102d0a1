/**
 * Writes a one-page PDF with a text layer (Helvetica, one line per entry at its font size, top to
 * bottom), so the PDF reader is tested on a real PDF without shipping one.
 */
export function tinyPdf(lines: ReadonlyArray<{ text: string; size: number; gapBefore?: number }>): Uint8Array {
  let y = 760;
  const content = lines
    .map((line) => {
      y -= (line.gapBefore ?? 0) + line.size * 1.3;
      const escaped = line.text.replace(/([\\()])/g, '\\$1');
      return `BT /F1 ${line.size} Tf 72 ${y.toFixed(1)} Td (${escaped}) Tj ET`;
    })
    .join('\n');
  const objects = [
    '<< /Type /Catalog /Pages 2 0 R >>',
    '<< /Type /Pages /Kids [3 0 R] /Count 1 >>',
    '<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Resources << /Font << /F1 4 0 R >> >> /Contents 5 0 R >>',
    '<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /Encoding /WinAnsiEncoding >>',
    `<< /Length ${Buffer.byteLength(content, 'latin1')} >>\nstream\n${content}\nendstream`,
  ];
  let body = '%PDF-1.4\n';
  const offsets: number[] = [];
  objects.forEach((object, i) => {
    offsets.push(Buffer.byteLength(body, 'latin1'));
    body += `${i + 1} 0 obj\n${object}\nendobj\n`;
  });
  const xref = Buffer.byteLength(body, 'latin1');
  body += `xref\n0 ${objects.length + 1}\n0000000000 65535 f \n${offsets.map((o) => `${String(o).padStart(10, '0')} 00000 n \n`).join('')}`;
  body += `trailer\n<< /Size ${objects.length + 1} /Root 1 0 R >>\nstartxref\n${xref}\n%%EOF\n`;
  return new Uint8Array(Buffer.from(body, 'latin1'));
}
