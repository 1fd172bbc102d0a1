import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parse, stringify } from 'yaml';
import { describe, expect, it } from 'vitest';
import { loadSeedPool } from '../../src/kinds/dialogue/seed-pool.ts';
import { REPO_ROOT } from '../helpers/repoData.ts';

const IN_CAR = join(REPO_ROOT, 'bench-configs/seeds/in-car.yaml');
const ALL = { domains: { min: 1, max: 3 }, seed: 42 };

function write(name: string, text: string): string {
  const path = join(mkdtempSync(join(tmpdir(), 'icabench-pool-')), name);
  writeFileSync(path, text);
  return path;
}

/** The in-car seeds repeated `count` times with unique ids, in the usual block layout. */
function bigPool(count: number, edit: (item: string, n: number) => string = (item) => item): string {
  const items = readFileSync(IN_CAR, 'utf8').split(/\n(?=  - id: )/).slice(1).map((item) => item.replace(/\n*$/, '\n'));
  const parts = ['# generated\nseeds:\n'];
  for (let n = 0; n < count; n++) parts.push(edit(items[n % items.length].replace(/- id: (\S+)/, `- id: $1-${n}`), n));
  return parts.join('');
}

describe('seed pools', () => {
  it('the indexed block layout and the same pool in another layout (parsed whole) give the same seeds in the same order', () => {
    const seeds = loadSeedPool(IN_CAR, { ...ALL, needed: Infinity });
    expect(seeds).toHaveLength(18);
    const pool = parse(readFileSync(IN_CAR, 'utf8')) as { seeds: unknown[] };
    const flow = write('flow.yaml', JSON.stringify(pool));
    const zeroIndent = write('zero.yaml', stringify(pool, { indentSeq: false }));
    expect(readFileSync(zeroIndent, 'utf8')).toMatch(/^seeds:\n- id: /);
    expect(loadSeedPool(flow, { ...ALL, needed: Infinity })).toEqual(seeds);
    expect(loadSeedPool(zeroIndent, { ...ALL, needed: Infinity })).toEqual(seeds);
  });

  it('a pool above 1 MiB is read only as far as the plan needs: a broken seed the sampling never reaches does not stop it', () => {
    const count = 5_000;
    const text = bigPool(count, (item, n) => (n === count - 1 ? item.replace('    text:', '    txt:') : item));
    expect(Buffer.byteLength(text)).toBeGreaterThan(1024 * 1024);
    const path = write('pool.yaml', text);
    const chosen = loadSeedPool(path, { ...ALL, needed: 10 });
    expect(chosen).toHaveLength(10);
    expect(chosen.map((s) => s.id)).not.toContain(expect.stringMatching(/-4999$/));
    // the whole pool: the broken seed is found, at its line
    const line = text.split('\n').findIndex((l) => l.startsWith('    txt: ')) + 1;
    expect(() => loadSeedPool(path, { ...ALL, needed: Infinity })).toThrow(new RegExp(`pool\\.yaml:${line}: seeds\\.4999\\.txt: unknown key "txt" in seeds\\.4999 \\(did you mean "text"\\?\\)`));
  });

  it('a walk that meets too many broken seeds stops after 20 and says so', () => {
    const text = bigPool(5_000, (item) => item.replace('    text:', '    txt:'));
    const path = write('pool.yaml', text);
    const message = (() => {
      try {
        loadSeedPool(path, { ...ALL, needed: 10 });
      } catch (error) {
        return (error as Error).message;
      }
      return '';
    })();
    const lines = message.split('\n');
    expect(lines).toHaveLength(21);
    expect(lines.at(-1)).toBe('… and more (checking stopped here)');
    for (const line of lines.slice(0, 20)) expect(line).toMatch(/pool\.yaml:\d+: seeds\.\d+\.(txt: unknown key "txt" in seeds\.\d+ \(did you mean "text"\?\)|text: missing required field "text")/);
    // lines point into the file: the reported line of a misspelled key holds it
    const [, lineNo] = /pool\.yaml:(\d+): seeds\.\d+\.txt/.exec(message)!;
    expect(text.split('\n')[Number(lineNo) - 1]).toMatch(/^    txt: /);
  });

  it('a pool of a config\'s size is checked whole, and its run uses every eligible seed', () => {
    expect(loadSeedPool(IN_CAR, { ...ALL, needed: 1 })).toHaveLength(18);
    const broken = write('small.yaml', bigPool(100, (item, n) => (n === 77 ? item.replace('    text:', '    txt:') : item)));
    expect(() => loadSeedPool(broken, { ...ALL, needed: 1 })).toThrow(/small\.yaml:\d+: seeds\.77\.txt: unknown key "txt"/);
  });

  it('seedIds keep their pool order before the shuffle, and an unknown id is named', () => {
    const ids = ['pharmacy-giesing', 'dinner-schwabing'];
    const chosen = loadSeedPool(IN_CAR, { ...ALL, seedIds: ids, needed: Infinity });
    expect(new Set(chosen.map((s) => s.id))).toEqual(new Set(ids));
    expect(() => loadSeedPool(IN_CAR, { ...ALL, seedIds: ['nope'], needed: 1 })).toThrow(/seedIds: nope not found in .*in-car\.yaml/);
  });

  it('a pool in another layout above 1 MiB is refused with the layout to use', () => {
    const seeds = loadSeedPool(IN_CAR, { ...ALL, needed: Infinity });
    const flow = write('flow.yaml', JSON.stringify({ seeds: Array.from({ length: 8_000 }, (_, n) => ({ ...seeds[n % seeds.length], id: `s${n}` })) }));
    expect(() => loadSeedPool(flow, { ...ALL, needed: 1 })).toThrow(/larger than 1 MiB must be a block list under "seeds:"/);
  });
});
