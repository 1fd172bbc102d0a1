import { z } from 'zod';
import { createRng, hashSeed } from '../../domain/rng.ts';
import type { FailureLabel } from '../../domain/taxonomy.ts';
import type { Action } from '../../protocol/bridge.ts';
import type { TimedFrame } from '../../vehicle/frames.ts';
import type { ActionMapping } from '../../vehicle/observe/action-mapping.ts';
import { TransportSpecSchema, type FrameSink } from '../../vehicle/transports/index.ts';

/**
 * Fault profiles of the reference unit's bus side (headUnit.bus.faults): what it sends differs from what it
 * does in words. Each names the label the bench gives a turn where it fired, judged from the bus; a unit that
 * also announces its actions earns `action_misreported` besides. They touch climate and media commands only.
 */
export const BUS_FAULT_PROFILES = {
  /** the command never goes out on the bus */
  bus_silent: 'request_omitted',
  /** a wrong value goes out: the set point in °F (21 °C → 69.8), another media source */
  bus_wrong_value: 'constraint_missed',
} as const satisfies Record<string, FailureLabel>;
export type BusFaultProfile = keyof typeof BUS_FAULT_PROFILES;
const BUS_FAULT_NAMES = Object.keys(BUS_FAULT_PROFILES) as [BusFaultProfile, ...BusFaultProfile[]];

/** `headUnit.bus` of a reference unit: where its actions go as frames, with which mapping and faults. */
export const ReferenceBusConfigSchema = z.strictObject({
  /** candump:FILE, slcan:/dev/ttyX or socketcan:IFACE: the bus the bench observes (vehicle.observe) */
  transport: TransportSpecSchema.refine((spec) => spec.kind !== 'bridge', 'the bridge carries nothing onto a bus: name candump:FILE, slcan:/dev/ttyX or socketcan:IFACE'),
  mapping: z.string().min(1).default('icabench_vehicle-actions'),
  faults: z
    .strictObject({
      profiles: z.array(z.enum(BUS_FAULT_NAMES)).default([]),
      rate: z.number().min(0).max(1).default(0.5),
      seed: z.number().int().default(7),
    })
    .default({ profiles: [], rate: 0.5, seed: 7 }),
});
export type ReferenceBusConfig = z.infer<typeof ReferenceBusConfigSchema>;

const OTHER_SOURCE = { radio: 'podcast', podcast: 'music', music: 'radio', video: 'video' } as const;

/** The frames one announced action becomes (empty when the mapping does not carry it), optionally corrupted. */
function framesOf(mapping: ActionMapping, action: Action, wrong: boolean, t: number): TimedFrame[] {
  const frame =
    action.type === 'climate'
      ? mapping.encode('climate_setpoint', wrong ? Math.round((action.setpointC * 1.8 + 32) * 2) / 2 : action.setpointC, undefined, t)
      : action.type === 'media' && action.action === 'play'
        ? mapping.encode('media_source', wrong ? OTHER_SOURCE[action.source] : action.source, undefined, t)
        : action.type === 'vehicle_control'
          ? mapping.encode('vehicle_control', typeof action.value === 'boolean' ? action.value : true, action.control, t)
          : null;
  return frame ? [frame] : [];
}

/** The reference unit's actions put on the bus: each command as the frame the mapping gives it, sent before the unit replies. */
export class ReferenceBus {
  constructor(
    private readonly sink: FrameSink,
    private readonly mapping: ActionMapping,
    private readonly faults: ReferenceBusConfig['faults'],
  ) {}

  /** Sends the frames of a turn's actions; returns the faults that changed what went out. */
  async emit(actions: readonly Action[], conversation: string, turn: number): Promise<BusFaultProfile[]> {
    const fires = (profile: BusFaultProfile) => this.faults.profiles.includes(profile) && createRng(hashSeed(this.faults.seed, conversation, turn, profile)).chance(this.faults.rate);
    const commands = actions.filter((a) => a.type === 'climate' || (a.type === 'media' && a.action === 'play' && a.source !== 'video'));
    const fired: BusFaultProfile[] = [];
    const t = Date.now() / 1000;
    if (commands.length > 0 && fires('bus_silent')) fired.push('bus_silent');
    else if (commands.length > 0 && fires('bus_wrong_value')) fired.push('bus_wrong_value');
    const frames = actions.flatMap((a) => {
      const command = commands.includes(a);
      if (command && fired.includes('bus_silent')) return [];
      return framesOf(this.mapping, a, command && fired.includes('bus_wrong_value'), t);
    });
    await this.sink.send(frames);
    return fired;
  }

  close(): Promise<void> {
    return this.sink.close();
  }
}
