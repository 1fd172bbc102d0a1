import { z } from 'zod';
import { SafetyPolicySchema } from '../domain/safety-policy.ts';
import { FAULT_PROFILE_NAMES, FaultConfigSchema, faultRates } from '../headunit/reference/faults.ts';
import { ReferenceBusConfigSchema } from '../headunit/reference/bus-actions.ts';
import { AcousticDevicesSchema } from '../voice/acoustic-link.ts';
import { timerMsSchema, timerSecondsSchema } from '../domain/durations.ts';

/** The head unit a campaign of any kind runs against: the reference unit, one that dials in to the bridge, or a chat endpoint. */
/** Where the bench listens for a head unit that dials in, and how long it waits (dialogue and tool-agent campaigns). */
export const BRIDGE_LISTEN_FIELDS = {
  host: z.string().default('127.0.0.1'),
  port: z.number().int().min(0).max(65535).default(7311),
  /** name of the environment variable holding the shared token */
  tokenEnv: z.string().default('ICABENCH_BRIDGE_TOKEN'),
  waitSeconds: timerSecondsSchema().default(60),
  turnTimeoutMs: timerMsSchema().default(15_000),
  /** while no unit is connected the campaign starts no item; it stops (resumable) when none dials in within this grace */
  reconnectGraceSeconds: timerSecondsSchema().default(60),
};

export const HeadUnitConfigSchema = z.discriminatedUnion('type', [
  /** the offline reference head unit, dialled in over the bridge inside this process */
  z.strictObject({
    type: z.literal('reference'),
    worldSeed: z.number().int().default(1),
    faults: FaultConfigSchema.default({ profiles: [], rate: 0.5, rates: {}, seed: 7 }),
    /** the policy the reference unit itself follows; default: the campaign's `safety` (set it to test a unit built to another rule) */
    safety: SafetyPolicySchema.optional(),
    /** the build it announces in hello (recorded with the run; compare lists fixes and regressions between builds); default named after its faults */
    build: z.string().min(1).max(200).optional(),
    /** with voice.link acoustic: the reference unit's own microphone (input) and loudspeaker (output) devices */
    acoustic: AcousticDevicesSchema.optional(),
    /** false: a text-only unit whose replies carry no structured actions (judged from the bus with vehicle.observe); default true */
    structuredActions: z.boolean().optional(),
    /** its actions also go out as frames on a bus (docs/bus-observation.md), with the bus fault profiles */
    bus: ReferenceBusConfigSchema.optional(),
  }),
  /** a real head unit (or `icabench headunit`) that dials in to the bench's bridge */
  z.strictObject({
    type: z.literal('bridge'),
    ...BRIDGE_LISTEN_FIELDS,
    maxMessageBytes: z.number().int().positive().optional(),
    /** flood guard: unsolicited messages per second one head unit may send (replies to the bench's requests never count) */
    maxMessagesPerSecond: z.number().positive().default(500),
  }),
  /** a text-only assistant behind an OpenAI-compatible chat endpoint */
  z.strictObject({
    type: z.literal('http'),
    baseUrl: z.string().url(),
    model: z.string(),
    apiKeyEnv: z.string().optional(),
    timeoutMs: timerMsSchema().default(30_000),
    systemPrompt: z.string().optional(),
  }),
]);
export type HeadUnitConfig = z.infer<typeof HeadUnitConfigSchema>;

/** The head unit a config names, in words, for a report whose unit announced no name (an HTTP endpoint). */
export function describeHeadUnit(headUnit: HeadUnitConfig): string {
  if (headUnit.type === 'reference') return 'the built-in reference head unit';
  if (headUnit.type === 'bridge') return `a head unit on the bridge (${headUnit.host}:${headUnit.port}) that announced no name`;
  return `the chat endpoint ${headUnit.baseUrl} (model ${headUnit.model})`;
}

/** The faults the reference head unit commits on purpose, in words and in a few; null when none is on or the unit is not the reference unit. */
export function injectedFaults(headUnit: HeadUnitConfig): { what: string; short: string } | null {
  if (headUnit.type !== 'reference') return null;
  const rates = faultRates(headUnit.faults);
  if (rates.size === 0) return null;
  const { rate } = headUnit.faults;
  const others = [...rates].filter(([, r]) => r !== rate).map(([profile, r]) => `${profile} ${r}`);
  const which = rates.size === FAULT_PROFILE_NAMES.length ? `all ${rates.size} fault profiles` : `the fault profile${rates.size > 1 ? 's' : ''} ${[...rates.keys()].join(', ')}`;
  return {
    what: `${which} of the reference head unit, each firing at rate ${rate}${others.length ? ` (${others.join(', ')})` : ''} where it applies`,
    short: `${rates.size} profile${rates.size > 1 ? 's' : ''} at rate ${rate}${others.length ? `, ${others.length} of them at other rates` : ''}`,
  };
}
