import { isAbsolute, relative, resolve } from 'node:path';
import type { CampaignConfig } from '../campaign/config.ts';
import type { FieldError } from './http-util.ts';
import { isTechniqueRef, parseJudgeRef } from '../llm/modelRef.ts';

/** Where a config started from the bench app may point: everything else is refused before any file is touched. */
export interface AppPathRoots {
  /** bench-configs/: relative paths resolve against it (a config's paths resolve against the file that names it) */
  configsDir: string;
  /** folders a config may read from: the workspace, bench-configs/, hardware/, models/ */
  readable: readonly string[];
  /** folders a config may write to (a candump file, the LLM request cache): the workspace */
  writable: readonly string[];
}

type PathKind = 'read' | 'write' | 'device';

/** One field of a campaign config that names a file, a folder or a device, with a setter for the materialized copy. */
interface PathField {
  field: string;
  path: string;
  kind: PathKind;
  /** the same field holding `path` instead (the value keeps its config form, e.g. "gguf:/abs/model.gguf") */
  rewrite(config: Record<string, unknown>, path: string): void;
}

/** Scenario and mapping names without a slash or .yaml are looked up in bench-configs/scenarios and hardware/mappings. */
const PATH_LIKE = /[\\/]|\.ya?ml$/i;
/** Serial devices an SLCAN adapter shows up as. */
const SERIAL_DEVICE = /^\/dev\/(tty[A-Za-z0-9]+|serial\/by-(id|path)\/[A-Za-z0-9._:-]+)$/;

function section(config: Record<string, unknown>, key: string): Record<string, unknown> {
  return config[key] as Record<string, unknown>;
}

/** Every file, folder or device a campaign config names (one place: the check and the materialized copy both use it). */
function pathFields(config: CampaignConfig): PathField[] {
  const fields: PathField[] = [{ field: 'seeds', path: config.seeds, kind: 'read', rewrite: (c, p) => (c.seeds = p) }];
  const vehicle = config.vehicle;
  if (vehicle) {
    if (PATH_LIKE.test(vehicle.scenario)) fields.push({ field: 'vehicle.scenario', path: vehicle.scenario, kind: 'read', rewrite: (c, p) => (section(c, 'vehicle').scenario = p) });
    if (PATH_LIKE.test(vehicle.mapping)) fields.push({ field: 'vehicle.mapping', path: vehicle.mapping, kind: 'read', rewrite: (c, p) => (section(c, 'vehicle').mapping = p) });
    const transport = vehicle.transport;
    if (transport.kind === 'candump' && transport.path) {
      fields.push({ field: 'vehicle.transport', path: transport.path, kind: 'write', rewrite: (c, p) => (section(c, 'vehicle').transport = `candump:${p}`) });
    }
    if (transport.kind === 'slcan') fields.push({ field: 'vehicle.transport', path: transport.path, kind: 'device', rewrite: () => undefined });
  }
  const voice = config.voice;
  if (voice?.library) fields.push({ field: 'voice.library', path: voice.library, kind: 'read', rewrite: (c, p) => (section(c, 'voice').library = p) });
  if (voice?.replyRecognizer.engine === 'whisper') {
    fields.push({ field: 'voice.replyRecognizer.modelDir', path: voice.replyRecognizer.modelDir, kind: 'read', rewrite: (c, p) => (section(section(c, 'voice'), 'replyRecognizer').modelDir = p) });
  }
  if (config.llm.cacheDir) fields.push({ field: 'llm.cacheDir', path: config.llm.cacheDir, kind: 'write', rewrite: (c, p) => (section(c, 'llm').cacheDir = p) });
  if (config.simulator.startsWith('gguf:')) fields.push({ field: 'simulator', path: config.simulator.slice(5), kind: 'read', rewrite: (c, p) => (c.simulator = `gguf:${p}`) });
  config.judges.forEach((judge, i) => {
    if (judge.startsWith('gguf:')) fields.push({ field: `judges.${i}`, path: judge.slice(5), kind: 'read', rewrite: (c, p) => ((c.judges as string[])[i] = `gguf:${p}`) });
    // a technique judge reads the gguf files of the models it names (sc-5:gguf:…, ar:gguf:…+gguf:…)
    if (!isTechniqueRef(judge)) return;
    let parsed: ReturnType<typeof parseJudgeRef>;
    try {
      parsed = parseJudgeRef(judge);
    } catch {
      return; // not a usable reference: the run stops on it before any model is loaded
    }
    parsed.models.forEach((model, j) => {
      if (!model.startsWith('gguf:')) return;
      const rewrite = (c: Record<string, unknown>, path: string) => {
        const models = [...parsed.models];
        models[j] = `gguf:${path}`;
        (c.judges as unknown[])[i] = `${parsed.technique}:${models.join('+')}`;
        parsed = { technique: parsed.technique, models };
      };
      fields.push({ field: `judges.${i}`, path: model.slice(5), kind: 'read', rewrite });
    });
  });
  if (config.diversity?.embeddingModel) {
    fields.push({ field: 'diversity.embeddingModel', path: config.diversity.embeddingModel, kind: 'read', rewrite: (c, p) => (section(c, 'diversity').embeddingModel = p) });
  }
  return fields;
}

function inside(root: string, path: string): boolean {
  const rel = relative(resolve(root), path);
  return rel === '' || (!rel.startsWith('..') && !isAbsolute(rel));
}

/**
 * The fields of a config started from the app that name something outside the allowed folders.
 * Purely lexical (no file is opened or stat'ed), so the answer is the same whether or not the file
 * exists: `seeds: /etc/passwd` learns nothing about /etc/passwd.
 */
export function disallowedConfigPaths(config: CampaignConfig, roots: AppPathRoots): FieldError[] {
  const errors: FieldError[] = [];
  for (const { field, path, kind } of pathFields(config)) {
    if (kind === 'device') {
      if (!SERIAL_DEVICE.test(path)) errors.push({ path: field, message: 'a serial device such as /dev/ttyACM0 or /dev/serial/by-id/…' });
      continue;
    }
    const absolute = resolve(roots.configsDir, path);
    const allowed = kind === 'write' ? roots.writable : roots.readable;
    if (!allowed.some((root) => inside(root, absolute))) {
      errors.push({ path: field, message: `configs started from the bench app may only ${kind === 'write' ? 'write under the workspace' : 'name files under the workspace, bench-configs/, hardware/ or models/'}` });
    }
  }
  return errors;
}

/**
 * The config as the app writes it to the workspace: every path made absolute against bench-configs/
 * (the copy lives elsewhere, and must read exactly what was checked) and the vehicle transport back
 * in its config form.
 */
export function absoluteConfigPaths(config: CampaignConfig, configsDir: string): Record<string, unknown> {
  const copy = structuredClone(config) as unknown as Record<string, unknown>;
  const vehicle = config.vehicle;
  if (vehicle) section(copy, 'vehicle').transport = transportText(vehicle.transport);
  for (const field of pathFields(config)) if (field.kind !== 'device') field.rewrite(copy, resolve(configsDir, field.path));
  return copy;
}

function transportText(spec: NonNullable<CampaignConfig['vehicle']>['transport']): string {
  switch (spec.kind) {
    case 'candump':
      return spec.path ? `candump:${spec.path}` : 'candump';
    case 'slcan':
      return `slcan:${spec.path}`;
    case 'socketcan':
      return `socketcan:${spec.iface}`;
    case 'bridge':
      return 'bridge';
  }
}
