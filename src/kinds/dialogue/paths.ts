import { resolve } from 'node:path';
import { PATH_LIKE } from '../../config/yaml.ts';
import type { CampaignConfig } from './config.ts';
import type { PathField as GenericPathField } from '../../run/kind.ts';
import { isTechniqueRef, parseJudgeRef, type ParsedJudgeRef } from '../../llm/modelRef.ts';

/**
 * Every file, folder or device a campaign config names, in one place: the loader resolves them against
 * the config file, the bench app checks them against its allowed folders, the read-outside test walks them.
 */

type PathField = GenericPathField<CampaignConfig>;


export function campaignPathFields(config: CampaignConfig): PathField[] {
  const fields: PathField[] = [{ field: 'seeds', path: config.seeds, kind: 'read', rewrite: (c, p) => (c.seeds = p) }];
  if (config.world) fields.push({ field: 'world', path: config.world, kind: 'read', rewrite: (c, p) => (c.world = p) });
  const vehicle = config.vehicle;
  if (vehicle) {
    if (PATH_LIKE.test(vehicle.scenario)) fields.push({ field: 'vehicle.scenario', path: vehicle.scenario, kind: 'read', rewrite: (c, p) => (c.vehicle!.scenario = p) });
    if (PATH_LIKE.test(vehicle.mapping)) fields.push({ field: 'vehicle.mapping', path: vehicle.mapping, kind: 'read', rewrite: (c, p) => (c.vehicle!.mapping = p) });
    const transport = vehicle.transport;
    if (transport.kind === 'candump' && transport.path) {
      fields.push({ field: 'vehicle.transport', path: transport.path, kind: 'write', rewrite: (c, p) => (c.vehicle!.transport = { kind: 'candump', path: p }) });
    }
    if (transport.kind === 'slcan') fields.push({ field: 'vehicle.transport', path: transport.path, kind: 'device', rewrite: () => undefined });
  }
  const voice = config.voice;
  if (voice?.library) fields.push({ field: 'voice.library', path: voice.library, kind: 'read', rewrite: (c, p) => (c.voice!.library = p) });
  const noise = voice?.acoustics.noise;
  if (noise && 'wav' in noise) fields.push({ field: 'voice.acoustics.noise.wav', path: noise.wav, kind: 'read', rewrite: (c, p) => (c.voice!.acoustics.noise = { wav: p }) });
  if (voice?.replyRecognizer.engine === 'whisper') {
    fields.push({
      field: 'voice.replyRecognizer.modelDir',
      path: voice.replyRecognizer.modelDir,
      kind: 'read',
      rewrite: (c, p) => (c.voice!.replyRecognizer = { engine: 'whisper', modelDir: p }),
    });
  }
  if (config.llm.cacheDir) fields.push({ field: 'llm.cacheDir', path: config.llm.cacheDir, kind: 'write', rewrite: (c, p) => (c.llm.cacheDir = p) });
  if (config.simulator.startsWith('gguf:')) fields.push({ field: 'simulator', path: config.simulator.slice(5), kind: 'read', rewrite: (c, p) => (c.simulator = `gguf:${p}`) });
  config.judges.forEach((judge, i) => {
    if (judge.startsWith('gguf:')) fields.push({ field: `judges.${i}`, path: judge.slice(5), kind: 'read', rewrite: (c, p) => (c.judges[i] = `gguf:${p}`) });
    // a technique judge reads the gguf files of the models it names (sc-5:gguf:…, ar:gguf:…+gguf:…)
    if (!isTechniqueRef(judge)) return;
    let parsed: ParsedJudgeRef;
    try {
      parsed = parseJudgeRef(judge);
    } catch {
      return; // not a usable reference: the run stops on it before any model is loaded
    }
    parsed.models.forEach((model, j) => {
      if (!model.startsWith('gguf:')) return;
      // each rewrite keeps the others' (a later field sees the earlier one's path)
      const rewrite = (c: CampaignConfig, path: string) => {
        const models = [...parsed.models];
        models[j] = `gguf:${path}`;
        parsed = { technique: parsed.technique, models };
        c.judges[i] = `${parsed.technique}:${models.join('+')}`;
      };
      fields.push({ field: `judges.${i}`, path: model.slice(5), kind: 'read', rewrite });
    });
  });
  const embeddingModel = config.diversity?.embeddingModel;
  if (embeddingModel) fields.push({ field: 'diversity.embeddingModel', path: embeddingModel, kind: 'read', rewrite: (c, p) => (c.diversity!.embeddingModel = p) });
  return fields;
}

/** A copy of `config` with every file and folder it names made absolute against `baseDir` (the folder of the file naming them). */
export function resolveCampaignPaths(config: CampaignConfig, baseDir: string): CampaignConfig {
  const copy = structuredClone(config);
  for (const field of campaignPathFields(config)) if (field.kind !== 'device') field.rewrite(copy, resolve(baseDir, field.path));
  return copy;
}
