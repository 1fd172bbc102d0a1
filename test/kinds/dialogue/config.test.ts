import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ConfigError, loadCampaignConfig } from '../../../src/kinds/dialogue/config.ts';
import { planConversations } from '../../../src/kinds/dialogue/sampling.ts';

function write(text: string): string {
  const path = join(mkdtempSync(join(tmpdir(), 'icabench-config-')), 'bad.yaml');
  writeFileSync(path, text);
  return path;
}

describe('campaign config', () => {
  it('names the file, the line, the field and what was expected', () => {
    const path = write(`name: x\nseeds: ${resolve('bench-configs/seeds/in-car.yaml')}\nconversations: 10\nconcurrency: many\n`);
    expect(() => loadCampaignConfig(path)).toThrow(ConfigError);
    expect(() => loadCampaignConfig(path)).toThrow(new RegExp(`${path.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')}:4: concurrency: .*expected number`));
  });

  it('rejects unknown fault profiles with the allowed names', () => {
    const path = write(`name: x\nseeds: ${resolve('bench-configs/seeds/in-car.yaml')}\nconversations: 10\nheadUnit:\n  type: reference\n  faults: { profiles: [explode] }\n`);
    expect(() => loadCampaignConfig(path)).toThrow(/:6: headUnit\.faults\.profiles: expected "all" or a list of fault profiles \(drop_second_constraint/);
  });

  it('reports YAML syntax errors with their line', () => {
    const path = write('name: x\nseeds: [unclosed\n');
    expect(() => loadCampaignConfig(path)).toThrow(/bad\.yaml:\d+:\d+: invalid YAML/);
  });

  it('refuses a plan above the limit up front, naming the limit and the reason (SNR levels count)', () => {
    const huge = write(`name: x\nseeds: ${resolve('bench-configs/seeds/in-car.yaml')}\nconversations: 100000\nrepeats: 100\n`);
    expect(() => loadCampaignConfig(huge)).toThrow(/bad\.yaml:3: conversations: the plan has 10,000,000 conversations \(conversations × repeats × SNR levels\), above the limit of 200,000: .*split the study/);
    const sweep = write(`name: x\nseeds: ${resolve('bench-configs/seeds/in-car.yaml')}\nconversations: 50000\nvoice: { acoustics: { snrDb: [clean, 20, 10, 5, 0] } }\n`);
    expect(() => loadCampaignConfig(sweep)).toThrow(/the plan has 250,000 conversations/);
    const atLimit = write(`name: x\nseeds: ${resolve('bench-configs/seeds/in-car.yaml')}\nconversations: 100000\nrepeats: 2\n`);
    expect(loadCampaignConfig(atLimit).config.repeats).toBe(2);
  });

  it('says which seed pool file is missing', () => {
    const path = write('name: x\nseeds: nowhere.yaml\nconversations: 3\n');
    expect(() => loadCampaignConfig(path)).toThrow(new RegExp(`nowhere\\.yaml: cannot read the seed pool named at ${path.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')}:2 \\(no such file\\)`));
  });

  it('samples representatively: every seed used equally often, and guided and baseline runs share seeds and contexts', () => {
    const guided = loadCampaignConfig('bench-configs/paper-guided.yaml');
    const baseline = loadCampaignConfig('bench-configs/paper-baseline.yaml');
    const a = planConversations(guided);
    const b = planConversations(baseline);
    expect(a).toHaveLength(200);
    const perSeed = new Map<string, number>();
    for (const spec of a) perSeed.set(spec.seed.id, (perSeed.get(spec.seed.id) ?? 0) + 1);
    expect(Math.max(...perSeed.values()) - Math.min(...perSeed.values())).toBeLessThanOrEqual(1);
    expect(a.map((s) => [s.seed.id, s.context])).toEqual(b.map((s) => [s.seed.id, s.context]));
    expect(new Set(b.map((s) => s.persona))).toEqual(new Set(['neutral']));
    expect(new Set(b.map((s) => s.maxTurns))).toEqual(new Set([8]));
    expect(b.every((s) => s.strategies.length === 0)).toBe(true);
    expect(new Set(a.map((s) => s.maxTurns))).toEqual(new Set([8, 10]));
    expect(new Set(a.map((s) => s.key)).size).toBe(200);
  });
});
