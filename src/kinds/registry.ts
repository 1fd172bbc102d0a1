import { isMap, LineCounter, parseDocument } from 'yaml';
import { z } from 'zod';
import { ConfigError, readBoundedText } from '../config/yaml.ts';
import { CampaignConfigSchema } from './dialogue/config.ts';
import { ManualQaConfigSchema } from './manual-qa/config.ts';
import { ToolAgentsConfigSchema } from './tool-agents/config.ts';
import { SuiteCampaignConfigSchema } from './suite/suite-kind.ts';
import { LiveSessionConfigSchema } from './live/config.ts';
import type { CampaignKindDefinition } from '../run/kind.ts';

/**
 * Campaign kinds: what the top-level `kind:` of a campaign config selects. `dialogue` (the
 * default, when `kind` is absent) runs simulated multi-turn conversations; `manual-qa` asks the
 * questions of an owner's-manual test set (docs/manual-qa.md); `tool-agents` runs CAR-bench-format
 * tool-using tasks against an agent in the simulated car (docs/tool-agents.md); `suite` replays scripted
 * suites (docs/suites.md); `live` is a technician's live session (`icabench session`, the app's Live screen: its config
 * is read there, a campaign config of this kind is refused when run). Each kind has its own config schema, stored
 * kind, run path, store layout (conversations: dialogue, suite, live; item results: the others) and outputs.
 */
export const CAMPAIGN_KINDS = ['dialogue', 'manual-qa', 'tool-agents', 'suite', 'live'] as const;
export type CampaignKind = (typeof CAMPAIGN_KINDS)[number];
export const DEFAULT_CAMPAIGN_KIND: CampaignKind = 'dialogue';

const isKind = (value: unknown): value is CampaignKind => typeof value === 'string' && (CAMPAIGN_KINDS as readonly string[]).includes(value);

function unknownKind(value: unknown, where: string): string {
  return `${where}kind: unknown campaign kind ${JSON.stringify(value)}; accepted kinds: ${CAMPAIGN_KINDS.map((k) => (k === DEFAULT_CAMPAIGN_KIND ? `${k} (the default)` : k)).join(', ')}`;
}

/**
 * The kind a campaign config file declares (dialogue when it has no `kind`). An unknown kind is a
 * ConfigError naming the file, the line and the accepted kinds. YAML errors are left to the kind's
 * own loader, which reports them with their line.
 */
export function readCampaignKind(path: string): CampaignKind {
  // bounded like every config read: a missing, oversized or endless file fails here naming it
  const text = readBoundedText(path, 'campaign config');
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
export function campaignKindOfValue(value: unknown): CampaignKind | null {
  if (typeof value !== 'object' || value === null || !('kind' in value)) return DEFAULT_CAMPAIGN_KIND;
  const kind = (value as { kind: unknown }).kind;
  return isKind(kind) ? kind : null;
}

const SCHEMAS: Record<CampaignKind, z.ZodType> = {
  dialogue: CampaignConfigSchema,
  'manual-qa': ManualQaConfigSchema,
  'tool-agents': ToolAgentsConfigSchema,
  suite: SuiteCampaignConfigSchema,
  live: LiveSessionConfigSchema,
};

/**
 * The schema a parsed campaign config validates with: its kind's (dialogue without `kind`), or, for an
 * unknown kind, one that fails at `kind` naming the accepted kinds. The bench app's config list and
 * editor use it, so they report exactly the errors `icabench run` would give, each at its field.
 */
export function campaignConfigSchemaFor(value: unknown): z.ZodType {
  const kind = campaignKindOfValue(value);
  if (kind !== null) return SCHEMAS[kind];
  const message = unknownKind((value as { kind: unknown }).kind, '').replace(/^kind: /, '');
  return z.looseObject({ kind: z.unknown().refine(() => false, { message }) });
}

/** A campaign kind's definition, whatever its config and items (the CLI, the bench app and the fleet treat every kind alike). */
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- each kind's types are its own; callers pass a kind its own loaded config
export type AnyCampaignKind = CampaignKindDefinition<any, any, any, any, any, any>;

/** Each kind's definition (src/run/kind.ts), loaded on demand: a kind's run and report modules load only when it runs. */
const DEFINITIONS: Record<CampaignKind, () => Promise<AnyCampaignKind>> = {
  dialogue: async () => (await import('./dialogue/kind.ts')).dialogueKind,
  'manual-qa': async () => (await import('./manual-qa/kind.ts')).manualQaKind,
  'tool-agents': async () => (await import('./tool-agents/kind.ts')).toolAgentsKind,
  suite: async () => (await import('./suite/kind.ts')).suiteKind,
  // a session's technician is not in the registry: this definition reads, lists and reports live runs, and refuses to run one
  live: async () => (await import('./live/kind.ts')).liveKind(),
};

/** The definition of a campaign kind; an unknown kind (a stored run of a newer version) is refused naming the accepted kinds. */
export function campaignKind(kind: string): Promise<AnyCampaignKind> {
  if (!isKind(kind)) throw new ConfigError(unknownKind(kind, ''));
  return DEFINITIONS[kind]();
}

/** The model references a parsed, valid config of any kind names in every role (the rig status and `icabench doctor` check them). */
export async function configModelRefs(config: unknown): Promise<string[]> {
  const kind = campaignKindOfValue(config);
  return kind === null ? [] : (await campaignKind(kind)).modelRefs(config);
}
