import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { loadCampaignConfig, type LoadedCampaign } from '../../../src/kinds/dialogue/config.ts';
import { SeedPoolSchema } from '../../../src/kinds/dialogue/seed-pool.ts';
import { loadYaml } from '../../../src/config/yaml.ts';
import { ResultStore } from '../../../src/store/store.ts';
import { runConversation } from '../../../src/kinds/dialogue/conversation.ts';
import type { ConversationResult, ConversationSpec, SeedPhrase } from '../../../src/domain/conversation.ts';
import { PERSONAS, STRATEGIES } from '../../../src/domain/taxonomy.ts';
import { InProcessHeadUnit } from '../../../src/headunit/in-process.ts';
import type { FaultConfigInput } from '../../../src/headunit/reference/faults.ts';
import { ReferenceHeadUnit } from '../../../src/headunit/reference/reference-headunit.ts';
import { OracleJudge } from '../../../src/judge/oracle.ts';
import { TemplateSimulator } from '../../../src/simulator/template.ts';
import { DISTRICTS } from '../../../src/world/world.ts';

/** The in-car seed pool in file order, read with the project's loader. */
export const SEEDS: SeedPhrase[] = loadYaml(SeedPoolSchema, fileURLToPath(new URL('../../../bench-configs/seeds/in-car.yaml', import.meta.url)), 'seed pool').seeds;

export function specFor(i: number, mode: 'guided' | 'baseline' = 'guided', overrides: Partial<ConversationSpec> = {}): ConversationSpec {
  const seed = SEEDS[i % SEEDS.length];
  const city = seed.city ?? 'Munich';
  const district = DISTRICTS.filter((d) => d.city === city)[i % 8];
  return {
    key: `test-${mode}-${i}`,
    seed,
    persona: mode === 'baseline' ? 'neutral' : PERSONAS[1 + (i % (PERSONAS.length - 1))],
    mode,
    strategies: mode === 'guided' ? [...STRATEGIES] : [],
    maxTurns: 10,
    context: { location: { city, district: district.name, position: district.center }, date: '2026-05-12', time: '13:00' },
    repeat: 0,
    rngSeed: 1000 + i,
    ...overrides,
  };
}

/** Runs `count` conversations in process against the reference head unit with the given faults. */
export async function runMany(count: number, faults: FaultConfigInput | undefined, mode: 'guided' | 'baseline' = 'guided'): Promise<ConversationResult[]> {
  const headUnit = new InProcessHeadUnit(new ReferenceHeadUnit({ faults }));
  const simulator = new TemplateSimulator();
  const judges = [new OracleJudge()];
  const results: ConversationResult[] = [];
  for (let i = 0; i < count; i++) {
    const spec = specFor(i, mode);
    results.push(await runConversation({ spec, openSession: (ctx) => headUnit.openSession(spec.key, ctx), simulator, judges }));
  }
  return results;
}

/** A campaign config in a temp folder: the in-car seed pool plus `yaml`. */
export function campaignFromYaml(yaml: string): LoadedCampaign {
  const dir = mkdtempSync(join(tmpdir(), 'icabench-campaign-'));
  const path = join(dir, 'campaign.yaml');
  writeFileSync(path, `seeds: ${resolve('bench-configs/seeds/in-car.yaml')}\n${yaml}`);
  return loadCampaignConfig(path);
}

/** A results store in a temp folder; `onCleanup` gets its close. */
export function tempStore(onCleanup: (close: () => void) => void): ResultStore {
  const store = ResultStore.open(join(mkdtempSync(join(tmpdir(), 'icabench-store-')), 'icabench.db'));
  onCleanup(() => store.close());
  return store;
}
