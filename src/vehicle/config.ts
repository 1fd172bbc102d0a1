import { z } from 'zod';
import { TransportSpecSchema } from './transports/index.ts';

/**
 * The `vehicle:` section of a campaign config: which drive scenario feeds the context, onto which DBC
 * mapping, over which transport, and how many scenario seconds pass per conversation turn.
 */
export const VehicleConfigSchema = z.object({
  /** scenario name (bench-configs/scenarios/<name>.yaml) or path */
  scenario: z.string().min(1),
  /** mapping name (hardware/mappings/<name>.yaml) or path; it names the DBC */
  mapping: z.string().min(1).default('icabench_vehicle'),
  transport: TransportSpecSchema.prefault('bridge'),
  /** scenario time that passes per turn: turn t sees contextAt(t * secondsPerTurn) */
  secondsPerTurn: z.number().positive().default(30),
});
export type VehicleConfig = z.infer<typeof VehicleConfigSchema>;
