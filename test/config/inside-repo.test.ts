import { loadActionMapping } from '../../src/vehicle/observe/action-mapping.ts';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { isAbsolute, join, relative } from 'node:path';
import { loadSuite } from '../../src/suite/format.ts';
import { loadSuiteCampaign, suitePathFields } from '../../src/kinds/suite/suite-kind.ts';
import { describe, expect, it } from 'vitest';
import { loadToolAgentsConfig } from '../../src/kinds/tool-agents/config.ts';
import { loadCampaignConfig } from '../../src/kinds/dialogue/config.ts';
import { campaignPathFields } from '../../src/kinds/dialogue/config.ts';
import { loadSeedPool } from '../../src/kinds/dialogue/seed-pool.ts';
import { PATH_LIKE } from '../../src/config/yaml.ts';
import { loadJudgeBenchConfig } from '../../src/judgebench/config.ts';
import { loadModelManifest } from '../../src/llm/manifest.ts';
import { readCampaignKind } from '../../src/kinds/registry.ts';
import { loadManualQaConfig } from '../../src/kinds/manual-qa/config.ts';
import { loadMapping, MAPPINGS_DIR } from '../../src/vehicle/mapping.ts';
import { loadScenario, SCENARIOS_DIR } from '../../src/vehicle/scenario.ts';
import { REPO_ROOT } from '../helpers/repoData.ts';

/** Every file under `dir` (relative to the repository) whose name matches. */
function filesUnder(dir: string, name: RegExp): string[] {
  const out: string[] = [];
  const walk = (folder: string) => {
    for (const entry of readdirSync(folder, { withFileTypes: true })) {
      const path = join(folder, entry.name);
      if (entry.isDirectory()) {
        if (entry.name !== 'node_modules' && !entry.name.startsWith('.')) walk(path);
      } else if (name.test(entry.name)) out.push(path);
    }
  };
  walk(join(REPO_ROOT, dir));
  return out.sort();
}

const outside = (path: string) => {
  const rel = relative(REPO_ROOT, path);
  return rel.startsWith('..') || isAbsolute(rel);
};

/**
 * Loads every YAML the repository ships with the loader of its kind and returns every path it names,
 * resolved the way the bench resolves it. A YAML of no known kind fails the test (add its kind here).
 */
async function namedPaths(file: string): Promise<string[]> {
  const rel = relative(REPO_ROOT, file);
  if (rel.startsWith('bench-configs/scenarios/')) {
    loadScenario(file);
    return [];
  }
  if (rel.startsWith('bench-configs/seeds/')) {
    loadSeedPool(file, { domains: { min: 1, max: 99 }, seed: 1, needed: Infinity });
    return [];
  }
  if (rel.startsWith('bench-configs/judge-bench/')) {
    const config = loadJudgeBenchConfig(file);
    return [...(config.dataset ? [config.dataset] : []), ...config.judges.flatMap((j) => (j.kind === 'llm' ? j.models.filter((m) => m.startsWith('gguf:')).map((m) => m.slice(5)) : []))];
  }
  if (rel.startsWith('bench-configs/suites/')) {
    loadSuite(file);
    return [];
  }
  if (/^bench-configs\/[^/]+\.ya?ml$/.test(rel) && readCampaignKind(file) === 'suite') {
    const campaign = loadSuiteCampaign(file);
    return suitePathFields(campaign.config).filter((f) => f.kind !== 'device').map((f) => f.path);
  }
  if (/^bench-configs\/[^/]+\.ya?ml$/.test(rel) && readCampaignKind(file) === 'tool-agents') {
    const { taskFiles, config } = loadToolAgentsConfig(file);
    return [...taskFiles, ...[config.simulator, ...config.judges].filter((m) => m.startsWith('gguf:')).map((m) => m.slice(5))];
  }
  // campaigns: the top-level `kind` picks the loader (src/kinds/registry.ts)
  if (/^bench-configs\/[^/]+\.ya?ml$/.test(rel) && readCampaignKind(file) === 'manual-qa') {
    const { config, files } = loadManualQaConfig(file);
    return [...files, ...(config.testSet ? [config.testSet] : []), ...(config.embeddingModel ? [config.embeddingModel] : [])];
  }
  if (/^bench-configs\/[^/]+\.ya?ml$/.test(rel)) {
    const { config } = loadCampaignConfig(file);
    const paths = campaignPathFields(config).filter((f) => f.kind !== 'device').map((f) => f.path);
    if (config.vehicle) {
      const scenario = PATH_LIKE.test(config.vehicle.scenario) ? config.vehicle.scenario : join(SCENARIOS_DIR, `${config.vehicle.scenario}.yaml`);
      const mapping = PATH_LIKE.test(config.vehicle.mapping) ? config.vehicle.mapping : join(MAPPINGS_DIR, `${config.vehicle.mapping}.yaml`);
      paths.push(scenario, mapping, ...(await namedPaths(mapping)));
      const observe = config.vehicle.observe?.mapping;
      if (observe) paths.push(...(await namedPaths(PATH_LIKE.test(observe) ? observe : join(MAPPINGS_DIR, `${observe}.yaml`))));
    }
    return paths;
  }
  if (rel.startsWith('hardware/mappings/') && rel.endsWith('-actions.yaml')) return [loadActionMapping(file).codec.db.source];
  if (rel.startsWith('hardware/mappings/')) return [loadMapping(file).codec.db.source];
  if (rel.startsWith('models/')) {
    const manifest = await loadModelManifest(file);
    return Object.values(manifest.sets).flatMap((set) =>
      [set.simulator, set.judge, set.embedding, ...Object.values(set.speech ?? {})].flatMap((entry) => [
        ...(entry?.file ? [entry.file] : []),
        ...(entry?.ref?.startsWith('gguf:') ? [entry.ref.slice(5)] : []),
      ]),
    );
  }
  throw new Error(`${rel}: a YAML of no known config kind; teach test/config/inside-repo.test.ts its loader`);
}

describe('nothing the repository ships reads outside it', () => {
  const yamls = ['bench-configs', 'hardware', 'models'].flatMap((dir) => filesUnder(dir, /\.ya?ml$/));

  it('finds the shipped configs', () => {
    expect(yamls.length).toBeGreaterThanOrEqual(15);
  });

  it.each(yamls.map((f) => [relative(REPO_ROOT, f), f]))('%s loads, and every path it names resolves inside the repository', async (_rel, file) => {
    const paths = await namedPaths(file);
    expect(paths.every((p) => isAbsolute(p))).toBe(true);
    expect(paths.filter(outside)).toEqual([]);
  }, 60_000);

  it('no source, test, script, config or CI file refers to a shared data folder beside the clone', () => {
    const needles = ['shared' + '/data', '..' + '/shared', 'ICABENCH_' + 'SHARED_DATA'];
    const files = ['src', 'test', 'scripts', 'bench-configs', 'hardware/mappings', 'models', '.ci', 'bin'].flatMap((dir) => {
      try {
        statSync(join(REPO_ROOT, dir));
      } catch {
        return [];
      }
      return filesUnder(dir, /\.(ts|tsx|js|mjs|cjs|ya?ml|json|sh)$|^run$/);
    });
    expect(files.length).toBeGreaterThan(100);
    const offending = files.filter((file) => needles.some((needle) => readFileSync(file, 'utf8').includes(needle))).map((f) => relative(REPO_ROOT, f));
    expect(offending).toEqual([]);
  });
});
