import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { ManualCorpus } from '../../src/manual/corpus.ts';
import { buildManualIndex } from '../../src/manual/manual-index.ts';
import { dataPath } from '../helpers/repoData.ts';

/** The 41 vendored BMW chapters. */
export function bmwChapters(): string[] {
  const dir = dataPath('bmw-manual/xml');
  return readdirSync(dir).filter((f) => f.endsWith('.xml')).sort().map((f) => join(dir, f));
}

let corpus: Promise<ManualCorpus> | null = null;
/** The index of the 41 chapters, built once per test file. */
export function bmwCorpus(): Promise<ManualCorpus> {
  corpus ??= buildManualIndex(bmwChapters()).then((index) => new ManualCorpus(index));
  return corpus;
}

/** warnings.csv: warning_id, …, type (Warning | Notice | Danger | empty), warning_text (quoted CSV) */
export function readWarningsCsv(): Array<{ id: string; type: string }> {
  const text = readFileSync(dataPath('bmw-manual/warnings.csv'), 'utf8');
  const rows: string[][] = [];
  let field = '';
  let row: string[] = [];
  let quoted = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (quoted) {
      if (c === '"' && text[i + 1] === '"') (field += '"'), i++;
      else if (c === '"') quoted = false;
      else field += c;
    } else if (c === '"') quoted = true;
    else if (c === ',') row.push(field), (field = '');
    else if (c === '\n') row.push(field), rows.push(row), (row = []), (field = '');
    else if (c !== '\r') field += c;
  }
  if (field || row.length) row.push(field), rows.push(row);
  const [header, ...body] = rows;
  const id = header.indexOf('warning_id');
  const type = header.indexOf('type');
  return body.filter((r) => r.length > type).map((r) => ({ id: r[id], type: r[type] }));
}

