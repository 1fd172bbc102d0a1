import { isMap, LineCounter, parseDocument } from 'yaml';
import { z } from 'zod';
import { ConfigError } from '../config/yaml.ts';
import { FILE_LIMITS, readBoundedText } from '../domain/input-files.ts';
import { CampaignConfigSchema } from './dialogue/config.ts';
import { ManualQaConfigSchema } from './manual-qa/config.ts';
import { ToolAgentsConfigSchema } from './tool-agents/config.ts';
import { SuiteCampaignConfigSchema } from './suite/suite-kind.ts';
import { LiveSessionConfigSchema } from './live/config.ts';
import type { CampaignKindDefinition } from '../run/kind.ts';

/** A campaign kind's definition, whatever its config and items (the CLI, the bench app and the fleet treat every kind alike). */
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- each kind's types are its own; callers pass a kind its own loaded config
export type AnyCampaignKind = CampaignKindDefinition<any, any, any, any, any, any>;

/**
 * One registry entry: what a config's top-level `kind:` selects. Adding a kind is its folder (its definition,
 * src/run/kind.ts, with its view) and one entry here; nothing else names it (docs/architecture.md, "Adding a campaign kind").
 */
export interface CampaignKindEntry {
  name: string;
  /** its config schema, at hand without loading the kind (the bench app's config list and editor validate with it) */
  configSchema: z.ZodType;
  /** its definition, loaded on demand: a kind's run and report modules load only when it runs or is shown */
  definition: () => Promise<AnyCampaignKind>;
}

/**
 * Campaign kinds: `dialogue` (the default, when `kind` is absent) runs simulated multi-turn conversations;
 * `manual-qa` asks the questions of an owner's-manual test set (docs/manual-qa.md); `tool-agents` runs
 * CAR-bench-format tool-using tasks against an agent in the simulated car (docs/tool-agents.md); `suite` replays
 * scripted suites (docs/suites.md); `live` is a technician's live session (`icabench session`, the app's Live screen: its
 * config is read there, a campaign config of this kind is refused when run). Each kind has its own config schema, stored
 * kind, run path, store layout (conversations: dialogue, suite, live; item results: the others), outputs and view.
 */
const BUILT_IN_KINDS = [
  { name: 'dialogue', configSchema: CampaignConfigSchema, definition: async () => (await import('./dialogue/kind.ts')).dialogueKind },
  { name: 'manual-qa', configSchema: ManualQaConfigSchema, definition: async () => (await import('./manual-qa/kind.ts')).manualQaKind },
  { name: 'tool-agents', configSchema: ToolAgentsConfigSchema, definition: async () => (await import('./tool-agents/kind.ts')).toolAgentsKind },
  { name: 'suite', configSchema: SuiteCampaignConfigSchema, definition: async () => (await import('./suite/kind.ts')).suiteKind },
  // a session's technician is not in the registry: this definition reads, lists and reports live runs, and refuses to run one
  { name: 'live', configSchema: LiveSessionConfigSchema, definition: async () => (await import('./live/kind.ts')).liveKind() },
] as const satisfies readonly CampaignKindEntry[];

export const CAMPAIGN_KINDS = BUILT_IN_KINDS.map((entry) => entry.name);
export type CampaignKind = (typeof BUILT_IN_KINDS)[number]['name'];
export const DEFAULT_CAMPAIGN_KIND: CampaignKind = 'dialogue';

const ENTRIES = new Map<string, CampaignKindEntry>();

/**
 * Adds a campaign kind to the registry (the built-in kinds above come in this way); a name taken already is refused. A kind
 * brought by its own folder outside src/ (test/kinds/fifth, a lab's kind) registers itself before the CLI, the bench app or
 * a fleet worker reads a config of it.
 */
export function registerCampaignKind(entry: CampaignKindEntry): void {
  if (ENTRIES.has(entry.name)) throw new Error(`campaign kind "${entry.name}" is registered already`);
  ENTRIES.set(entry.name, entry);
}
for (const entry of BUILT_IN_KINDS) registerCampaignKind(entry);

/** The names of every registered kind, the built-in ones first. */
export function campaignKindNames(): string[] {
  return [...ENTRIES.keys()];
}

const isKind = (value: unknown): value is string => typeof value === 'string' && ENTRIES.has(value);

function unknownKind(value: unknown, where: string): string {
  return `${where}kind: unknown campaign kind ${JSON.stringify(value)}; accepted kinds: ${campaignKindNames().map((k) => (k === DEFAULT_CAMPAIGN_KIND ? `${k} (the default)` : k)).join(', ')}`;
}

/**
 * The kind a campaign config file declares (dialogue when it has no `kind`). An unknown kind is a
 * ConfigError naming the file, the line and the accepted kinds. YAML errors are left to the kind's
 * own loader, which reports them with their line.
 */
export function readCampaignKind(path: string): string {
  // bounded like every config read: a missing, oversized or endless file fails here naming it
  const text = readBoundedText(path, 'campaign config', FILE_LIMITS.config);
  const counter = new LineCounter();
  const doc = parseDocument(text, { lineCounter: counter });
  if (doc.errors.length > 0 || !isMap(doc.contents)) return DEFAULT_CAMPAIGN_KIND;
  const node = doc.contents.get('kind', true);
  // a judge-benchmark config (a dataset to generate or read, no campaign kind) is not a campaign: say which command runs it
  if (node === undefined && (doc.contents.has('generate') || doc.contents.has('dataset'))) {
    throw new ConfigError(`${path}: this is a judge-benchmark config ("${doc.contents.has('generate') ? 'generate' : 'dataset'}:", no campaign kind); run it with: icabench judge-bench ${path}`);
  }
  if (node === undefined) return DEFAULT_CAMPAIGN_KIND;
  const value = node?.toJSON?.() ?? node;
  if (isKind(value)) return value;
  const line = node?.range ? counter.linePos(node.range[0]).line : null;
  throw new ConfigError(unknownKind(value, `${path}${line ? `:${line}` : ''}: `));
}

/** The kind of an already parsed config value (the bench app's listing); null when `kind` names no known kind. */
export function campaignKindOfValue(value: unknown): string | null {
  if (typeof value !== 'object' || value === null || !('kind' in value)) return DEFAULT_CAMPAIGN_KIND;
  const kind = (value as { kind: unknown }).kind;
  return isKind(kind) ? kind : null;
}

/**
 * The schema a parsed campaign config validates with: its kind's (dialogue without `kind`), or, for an
 * unknown kind, one that fails at `kind` naming the accepted kinds. The bench app's config list and
 * editor use it, so they report exactly the errors `icabench run` would give, each at its field.
 */
export function campaignConfigSchemaFor(value: unknown): z.ZodType {
  const kind = campaignKindOfValue(value);
  if (kind !== null) return ENTRIES.get(kind)!.configSchema;
  const message = unknownKind((value as { kind: unknown }).kind, '').replace(/^kind: /, '');
  return z.looseObject({ kind: z.unknown().refine(() => false, { message }) });
}

/** The definition of a campaign kind; an unknown kind (a stored run of a newer version) is refused naming the accepted kinds. */
export function campaignKind(kind: string): Promise<AnyCampaignKind> {
  if (!isKind(kind)) throw new ConfigError(unknownKind(kind, ''));
  return ENTRIES.get(kind)!.definition();
}

/** The model references a parsed, valid config of any kind names in every role (the rig status and `icabench doctor` check them). */
export async function configModelRefs(config: unknown): Promise<string[]> {
  const kind = campaignKindOfValue(config);
  return kind === null ? [] : (await campaignKind(kind)).modelRefs(config);
}

/**
 * The kinds whose runs are compared, in groups: two runs compare when their kinds show them with the same view and it
 * compares (src/run/kind-view.ts): dialogue, suite and live runs (all runs of conversations), tool-agents runs. The
 * compare page's and `icabench compare`'s refusals are made from these (src/domain/comparable.ts).
 */
export async function comparedKindGroups(): Promise<string[][]> {
  const groups = new Map<unknown, string[]>();
  for (const kind of await Promise.all(campaignKindNames().map(campaignKind))) {
    if (kind.view.compared) groups.set(kind.view, [...(groups.get(kind.view) ?? []), kind.name]);
  }
  return [...groups.values()];
}
