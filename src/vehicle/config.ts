import { z } from 'zod';
import { TransportSpecSchema } from './transports/index.ts';
import { ObserveConfigSchema } from './observe/config.ts';

/**
 * The `vehicle:` section of a campaign config: which drive scenario feeds the context, onto which DBC
 * mapping, over which transport, and how many scenario seconds pass per conversation turn.
 */
export const VehicleConfigSchema = z
  .strictObject({
    /** scenario name (bench-configs/scenarios/<name>.yaml) or path */
    scenario: z.string().min(1),
    /** mapping name (hardware/mappings/<name>.yaml) or path; it names the DBC */
    mapping: z.string().min(1).default('icabench_vehicle'),
    transport: TransportSpecSchema.prefault('bridge'),
    /** scenario time that passes per turn: turn t sees contextAt(startS + t * secondsPerTurn) */
    secondsPerTurn: z.number().positive().default(30),
    /**
     * drive: the scenario gives the place, the clock and the car's state; motion: only the car's state
     * (speed, gear, parking brake, battery, climate), each conversation keeps its sampled place and clock
     */
    context: z.enum(['drive', 'motion']).default('drive'),
    /** scenario second of turn 0; `{ from, to }`: each conversation starts at its own second, drawn from the sampling seed */
    startS: z.union([z.number().min(0), z.strictObject({ from: z.number().min(0), to: z.number().min(0) })]).default(0),
    /** listen on the bus for what the head unit does and judge it (docs/bus-observation.md) */
    observe: ObserveConfigSchema.optional(),
  })
  .superRefine((config, ctx) => {
    if (typeof config.startS === 'object' && config.startS.from > config.startS.to) {
      ctx.addIssue({ code: 'custom', path: ['startS'], message: 'from must not be later than to' });
    }
  });
export type VehicleConfig = z.infer<typeof VehicleConfigSchema>;
