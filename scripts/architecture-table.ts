// Writes the "may import" column of docs/architecture.md's table of roles from the import rules
// (test/architecture/import-rules.ts), which test/architecture/imports.test.ts enforces; that test also checks the column.
// Usage: npx tsx scripts/architecture-table.ts
import { readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { withGeneratedTable } from '../test/architecture/import-rules.ts';

const root = resolve(import.meta.dirname, '..');
const path = join(root, 'docs/architecture.md');
const doc = readFileSync(path, 'utf8');
const generated = withGeneratedTable(doc, root);
if (generated === doc) console.log('docs/architecture.md: the "may import" column already matches the import rules');
else {
  writeFileSync(path, generated);
  console.log('docs/architecture.md: the "may import" column rewritten from the import rules');
}
