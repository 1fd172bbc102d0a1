import { describe, expect, it } from 'vitest';
import { VehicleConfigSchema } from '../../src/vehicle/config.ts';

describe('vehicle transport in a config', () => {
  it('a loaded config sent as JSON parses again to the same transport (a fleet run descriptor)', () => {
    for (const transport of ['bridge', 'candump', 'candump:/tmp/x.log', 'slcan:/dev/ttyACM0', 'socketcan:vcan0']) {
      const loaded = VehicleConfigSchema.parse({ scenario: 'parked', transport });
      expect(VehicleConfigSchema.parse(JSON.parse(JSON.stringify(loaded))), transport).toEqual(loaded);
    }
  });

  it('a transport that is neither says what is expected', () => {
    const parsed = VehicleConfigSchema.safeParse({ scenario: 'parked', transport: 'can0' });
    expect(parsed.error?.issues).toEqual([expect.objectContaining({ path: ['transport'], message: 'expected candump, candump:FILE, slcan:/dev/ttyX, socketcan:IFACE or bridge, got "can0"' })]);
    expect(VehicleConfigSchema.safeParse({ scenario: 'parked', transport: { kind: 'slcan' } }).success).toBe(false);
  });
});
