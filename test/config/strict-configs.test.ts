import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ToolAgentsConfigSchema, loadToolAgentsConfig } from '../../src/kinds/tool-agents/config.ts';
import { CampaignConfigSchema, ConfigError, loadCampaignConfig } from '../../src/kinds/dialogue/config.ts';
import { SeedPoolSchema, loadSeedPool } from '../../src/kinds/dialogue/seed-pool.ts';
import { nonStrictObjects } from '../../src/config/schema-walk.ts';
import { parseYaml, suggestKey } from '../../src/config/yaml.ts';
import { JudgeBenchConfigSchema, loadJudgeBenchConfig } from '../../src/judgebench/config.ts';
import { ModelManifestSchema, loadModelManifest } from '../../src/llm/manifest.ts';
import { ManualQaConfigSchema, loadManualQaConfig } from '../../src/kinds/manual-qa/config.ts';
import { ConfigCatalog } from '../../src/server/configs.ts';
import { VehicleMappingSchema, loadMapping } from '../../src/vehicle/mapping.ts';
import { ScenarioFileSchema, loadScenario } from '../../src/vehicle/scenario.ts';
import { REPO_ROOT } from '../helpers/repoData.ts';

const SEEDS = join(REPO_ROOT, 'bench-configs/seeds/in-car.yaml');

function write(name: string, text: string): string {
  const path = join(mkdtempSync(join(tmpdir(), 'icabench-strict-')), name);
  writeFileSync(path, text);
  return path;
}

/** The error a load throws (fails the test when it does not throw a ConfigError). */
function errorOf(load: () => unknown): string {
  try {
    load();
  } catch (error) {
    expect(error).toBeInstanceOf(ConfigError);
    return (error as Error).message;
  }
  throw new Error('expected the load to fail');
}

async function asyncErrorOf(load: () => Promise<unknown>): Promise<string> {
  try {
    await load();
  } catch (error) {
    expect(error).toBeInstanceOf(ConfigError);
    return (error as Error).message;
  }
  throw new Error('expected the load to fail');
}

/** The line (1-based) of the first line of `text` that starts with `prefix` (after indentation). */
function lineOf(text: string, prefix: string): number {
  const index = text.split('\n').findIndex((line) => line.trimStart().startsWith(prefix));
  expect(index).toBeGreaterThanOrEqual(0);
  return index + 1;
}

const escape = (s: string) => s.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');

const CAMPAIGN = `name: strict
seeds: ${SEEDS}
conversations: 10
headUnit:
  type: reference
  faults:
    profiles: all
    rate: 0.5
`;

describe('every config schema is strict', () => {
  it.each([
    ['campaign', CampaignConfigSchema],
    ['seed pool', SeedPoolSchema],
    ['scenario', ScenarioFileSchema],
    ['mapping', VehicleMappingSchema],
    ['model manifest', ModelManifestSchema],
    ['judge-bench', JudgeBenchConfigSchema],
    ['manual-QA', ManualQaConfigSchema],
    ['tool-agents', ToolAgentsConfigSchema],
  ])('%s: no object lets unknown keys through', (_kind, schema) => {
    expect(nonStrictObjects(schema)).toEqual([]);
  });
});

describe('campaign config typos', () => {
  it('concurency: 4 fails at its line with "did you mean concurrency"', () => {
    const text = `${CAMPAIGN}concurency: 4\n`;
    const path = write('typo.yaml', text);
    expect(errorOf(() => loadCampaignConfig(path))).toMatch(new RegExp(`^${escape(path)}:${lineOf(text, 'concurency')}: concurency: unknown key "concurency" \\(did you mean "concurrency"\\?\\)$`));
  });

  it('repeat: 3 fails instead of silently running 10 conversations', () => {
    const text = `${CAMPAIGN}repeat: 3\n`;
    const path = write('typo.yaml', text);
    expect(errorOf(() => loadCampaignConfig(path))).toMatch(new RegExp(`:${lineOf(text, 'repeat:')}: repeat: unknown key "repeat" \\(did you mean "repeats"\\?\\)`));
  });

  it('a nested rat: 0.5 is found where rate lives (headUnit.faults)', () => {
    const text = CAMPAIGN.replace('    rate: 0.5', '    rat: 0.5');
    const path = write('typo.yaml', text);
    expect(errorOf(() => loadCampaignConfig(path))).toMatch(
      new RegExp(`:${lineOf(text, 'rat:')}: headUnit\\.faults\\.rat: unknown key "rat" in headUnit\\.faults \\(did you mean "rate"\\?\\)`),
    );
  });

  it('a misspelled required field names the misspelled key and the field missing from its mapping', () => {
    const text = CAMPAIGN.replace('conversations: 10', 'conversatons: 10');
    const path = write('typo.yaml', text);
    const message = errorOf(() => loadCampaignConfig(path));
    expect(message).toMatch(new RegExp(`:${lineOf(text, 'conversatons')}: conversatons: unknown key "conversatons" \\(did you mean "conversations"\\?\\)`));
    expect(message).toMatch(/:1: conversations: missing required field "conversations" \(expected number\) in the top-level mapping at line 1/);
  });

  it('a required field missing in a nested mapping points to that mapping', () => {
    const text = `${CAMPAIGN}vehicle:\n  mapping: icabench_vehicle\n`;
    const path = write('nested.yaml', text);
    expect(errorOf(() => loadCampaignConfig(path))).toMatch(
      new RegExp(`:${lineOf(text, 'vehicle:')}: vehicle\\.scenario: missing required field "scenario" \\(expected string\\) in the mapping "vehicle" at line ${lineOf(text, 'vehicle:')}`),
    );
  });

  it('a typo in the voice section and inside a union (noise source) is placed and suggested', () => {
    const text = `${CAMPAIGN}voice:\n  realtme: true\n  acoustics:\n    noise: { kind: road, sed: 2 }\n`;
    const path = write('voice.yaml', text);
    const message = errorOf(() => loadCampaignConfig(path));
    expect(message).toMatch(new RegExp(`:${lineOf(text, 'realtme')}: voice\\.realtme: unknown key "realtme" in voice \\(did you mean "realtime"\\?\\)`));
    expect(message).toMatch(new RegExp(`:${lineOf(text, 'noise:')}: voice\\.acoustics\\.noise\\.sed: unknown key "sed" in voice\\.acoustics\\.noise \\(did you mean "seed"\\?\\)`));
  });

  it('a typo in a head unit variant suggests from that variant (discriminated union)', () => {
    const text = `name: strict\nseeds: ${SEEDS}\nconversations: 2\nheadUnit:\n  type: bridge\n  turnTimeotMs: 5000\n`;
    const path = write('bridge.yaml', text);
    expect(errorOf(() => loadCampaignConfig(path))).toMatch(/:6: headUnit\.turnTimeotMs: unknown key "turnTimeotMs" in headUnit \(did you mean "turnTimeoutMs"\?\)/);
  });

  it('lists at most 20 problems, then counts the rest', () => {
    const typos = Array.from({ length: 25 }, (_, i) => `unknownKey${i}: 1`).join('\n');
    const path = write('many.yaml', `${CAMPAIGN}${typos}\n`);
    const message = errorOf(() => loadCampaignConfig(path));
    expect(message.split('\n')).toHaveLength(21);
    expect(message.split('\n').at(-1)).toBe('… and 5 more');
  });

  it('the bench app shows the same problem on the same line', () => {
    const text = `${CAMPAIGN}concurency: 4\n`;
    const check = new ConfigCatalog(tmpdir(), CampaignConfigSchema).check(text);
    expect(check.valid).toBe(false);
    expect(check.errors).toEqual([{ path: 'concurency', line: lineOf(text, 'concurency'), message: 'unknown key "concurency" (did you mean "concurrency"?)' }]);
  });
});

describe('typos in the other config kinds', () => {
  it('seed pool: a misspelled key of one seed names the seed, the line and the suggestion', () => {
    const pool = 'seeds:\n  - id: one\n    txt: Find a pharmacy.\n    requests:\n      - { intent: find_poi, category: pharmacy }\n';
    const path = write('pool.yaml', pool);
    const message = errorOf(() => loadSeedPool(path, { domains: { min: 1, max: 3 }, seed: 1, needed: 1 }));
    expect(message).toMatch(new RegExp(`${escape(path)}:3: seeds\\.0\\.txt: unknown key "txt" in seeds\\.0 \\(did you mean "text"\\?\\)`));
    expect(message).toMatch(/:2: seeds\.0\.text: missing required field "text"/);
  });

  it('seed pool: a typo inside a request (constraint list) is not silently dropped', () => {
    const pool = 'seeds:\n  - id: one\n    text: Find a pharmacy.\n    requests:\n      - intent: find_poi\n        category: pharmacy\n        constraint: [{ kind: district, value: Giesing }]\n';
    const path = write('pool.yaml', pool);
    expect(errorOf(() => loadSeedPool(path, { domains: { min: 1, max: 3 }, seed: 1, needed: 1 }))).toMatch(/:7: seeds\.0\.requests\.0\.constraint: unknown key "constraint" .*did you mean "constraints"/);
  });

  it('scenario', () => {
    const text = readFileSync(join(REPO_ROOT, 'bench-configs/scenarios/parked.yaml'), 'utf8').replace(/^durationS:/m, 'duratonS:');
    const path = write('scenario.yaml', text);
    const message = errorOf(() => loadScenario(path));
    expect(message).toMatch(new RegExp(`${escape(path)}:${lineOf(text, 'duratonS')}: duratonS: unknown key "duratonS" \\(did you mean "durationS"\\?\\)`));
    expect(message).toMatch(/durationS: missing required field "durationS"/);
  });

  it('vehicle mapping (inside a signal reference)', () => {
    const text = readFileSync(join(REPO_ROOT, 'hardware/mappings/icabench_vehicle.yaml'), 'utf8').replace('speedKmh: { message: VEHICLE_MOTION, signal: VehicleSpeed }', 'speedKmh: { message: VEHICLE_MOTION, signal: VehicleSpeed, scal: 2 }');
    const path = write('mapping.yaml', text);
    expect(errorOf(() => loadMapping(path))).toMatch(new RegExp(`${escape(path)}:${lineOf(text, 'speedKmh')}: signals\\.speedKmh\\.scal: unknown key "scal" in signals\\.speedKmh \\(did you mean "scale"\\?\\)`));
  });

  it('vehicle mapping: a check beyond the schema (the DBC) names the line of its field too', () => {
    const text = readFileSync(join(REPO_ROOT, 'hardware/mappings/icabench_vehicle.yaml'), 'utf8')
      .replace('dbc: ../icabench_vehicle.dbc', `dbc: ${join(REPO_ROOT, 'hardware/icabench_vehicle.dbc')}`)
      .replace('rangeKm: { message: BATTERY_STATUS, signal: RemainingRange }', 'rangeKm: { message: BATTERY_STATUS, signal: Remaining }');
    const path = write('mapping.yaml', text);
    expect(() => loadMapping(path)).toThrow(new RegExp(`^${escape(path)}:${lineOf(text, 'rangeKm')}: signals\\.rangeKm\\.signal: Remaining is not a signal of BATTERY_STATUS$`));
  });

  it('model manifest', async () => {
    const text = readFileSync(join(REPO_ROOT, 'models/default.yaml'), 'utf8').replace('    temperature: 0\n', '    temprature: 0\n');
    const path = write('models.yaml', text);
    expect(await asyncErrorOf(() => loadModelManifest(path))).toMatch(new RegExp(`${escape(path)}:${lineOf(text, 'temprature')}: sets\\.paper\\.temprature: unknown key "temprature" in sets\\.paper \\(did you mean "temperature"\\?\\)`));
  });

  it('judge-bench config', () => {
    const text = readFileSync(join(REPO_ROOT, 'bench-configs/judge-bench/judge-bench-oracle.yaml'), 'utf8').replace('  users: 100', '  user: 100');
    const path = write('judge-bench.yaml', text);
    expect(errorOf(() => loadJudgeBenchConfig(path))).toMatch(new RegExp(`${escape(path)}:${lineOf(text, 'user:')}: generate\\.user: unknown key "user" in generate \\(did you mean "users"\\?\\)`));
  });

  it('manual-QA config', () => {
    const text = readFileSync(join(REPO_ROOT, 'bench-configs/manual-qa.yaml'), 'utf8').replace('concurrency: 4', 'concurency: 4');
    const path = write('manual-qa.yaml', text);
    expect(errorOf(() => loadManualQaConfig(path))).toMatch(new RegExp(`${escape(path)}:${lineOf(text, 'concurency')}: concurency: unknown key "concurency" \\(did you mean "concurrency"\\?\\)`));
  });
});

describe('a misspelled required field, in every config kind', () => {
  const kinds: Array<[string, string, string, string, (path: string) => unknown]> = [
    ['campaign', 'bench-configs/quickstart.yaml', 'seeds:', 'sedes:', loadCampaignConfig],
    ['scenario', 'bench-configs/scenarios/urban.yaml', 'route:', 'rout:', loadScenario],
    ['vehicle mapping', 'hardware/mappings/icabench_vehicle.yaml', 'name:', 'nme:', loadMapping],
    ['model manifest', 'models/default.yaml', 'version:', 'verison:', loadModelManifest],
    ['judge-bench', 'bench-configs/judge-bench/judge-bench-oracle.yaml', 'judges:', 'judgs:', loadJudgeBenchConfig],
    ['manual-QA', 'bench-configs/manual-qa.yaml', 'manual:', 'manul:', loadManualQaConfig],
    ['tool-agents', 'bench-configs/carbench-train.yaml', 'tasks:', 'taks:', loadToolAgentsConfig],
  ];
  it.each(kinds)('%s: the misspelled key at its line with the suggestion, and the missing field with its mapping', async (_kind, file, key, typo, load) => {
    const original = readFileSync(join(REPO_ROOT, file), 'utf8');
    expect(original).toMatch(new RegExp(`^${key}`, 'm'));
    const text = original.replace(new RegExp(`^${key}`, 'm'), typo);
    // the copy sits in the original's folder's place: its relative paths are not what is tested here
    const path = write(file.split('/').at(-1)!, text);
    const message = await (async () => {
      try {
        await load(path);
      } catch (error) {
        return (error as Error).message;
      }
      return 'loaded';
    })();
    const name = key.slice(0, -1);
    const wrong = typo.slice(0, -1);
    expect(message).toContain(`${path}:${lineOf(text, typo)}: ${wrong}: unknown key "${wrong}" (did you mean "${name}"?)`);
    expect(message).toMatch(new RegExp(`${escape(path)}:\\d+: ${name}: missing required field "${name}" \\(expected [^)]+\\) in the top-level mapping at line \\d+`));
  });
});

describe('the YAML loader', () => {
  it('refuses an alias bomb without expanding it', () => {
    const bomb = ['a: &a ["x","x","x","x","x","x","x","x","x"]', ...'bcdefghi'.split('').map((k, i) => `${k}: &${k} [*${'abcdefghi'[i]},*${'abcdefghi'[i]},*${'abcdefghi'[i]},*${'abcdefghi'[i]},*${'abcdefghi'[i]},*${'abcdefghi'[i]},*${'abcdefghi'[i]},*${'abcdefghi'[i]},*${'abcdefghi'[i]}]`)].join('\n');
    expect(() => parseYaml(CampaignConfigSchema, bomb, 'bomb.yaml')).toThrow(/bomb\.yaml: the YAML cannot be expanded/);
  });

  it('reports syntax errors at file:line:col', () => {
    expect(() => parseYaml(CampaignConfigSchema, 'name: x\nseeds: [unclosed\n', 'broken.yaml')).toThrow(/^broken\.yaml:3:1: invalid YAML: /);
  });

  it('suggests only close keys', () => {
    expect(suggestKey('concurency', ['conversations', 'concurrency'])).toBe('concurrency');
    expect(suggestKey('rat', ['rate', 'rates', 'seed'])).toBe('rate');
    expect(suggestKey('cnocurrency', ['concurrency'])).toBe('concurrency');
    expect(suggestKey('banana', ['concurrency', 'seed'])).toBeNull();
  });
});
