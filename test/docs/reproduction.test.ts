import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { reproductionTable, SCALE, withReproductionTable } from '../../scripts/reproduce.ts';

describe('docs/reproduction.md', () => {
  it('its generated table is what every paper preset gives offline now, byte for byte (npm run reproduce rewrites it)', async () => {
    const doc = readFileSync('docs/reproduction.md', 'utf8');
    const table = await reproductionTable();
    // the scale the check runs at is stated in the table itself
    expect(table).toContain(`Scale: ${SCALE.dialogueConversations} conversations per dialogue preset`);
    expect(withReproductionTable(doc, table)).toBe(doc);
  }, 900_000);

  it('refuses a doc without the markers, naming them', () => {
    expect(() => withReproductionTable('# no table', 'x')).toThrow(/markers are missing/);
  });
});
