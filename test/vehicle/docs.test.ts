import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { VehicleContextEnvelopeSchema } from '../../src/protocol/bridge.ts';
import { VehicleContextDecoder } from '../../src/vehicle/decoder.ts';
import { loadMapping } from '../../src/vehicle/mapping.ts';
import { loadScenario } from '../../src/vehicle/scenario.ts';

describe('docs/bridge-protocol.md, section "Vehicle context"', () => {
  it('has an example envelope that validates and decodes to the urban scenario at t = 160 s', () => {
    const doc = readFileSync(new URL('../../docs/bridge-protocol.md', import.meta.url), 'utf8');
    const section = doc.slice(doc.indexOf('## Vehicle context'), doc.indexOf('\n## ', doc.indexOf('## Vehicle context') + 1));
    const block = /```jsonc\n([\s\S]*?)```/.exec(section);
    expect(block).not.toBeNull();
    const envelope = VehicleContextEnvelopeSchema.parse(JSON.parse(block![1]));
    const decoder = new VehicleContextDecoder(loadMapping('icabench_vehicle'));
    expect(decoder.ingest(envelope.payload)).toEqual({ accepted: 2, rejected: 0, problems: [] });
    const expected = loadScenario('urban').stateAt(160);
    const state = decoder.state()!;
    expect(state.gear).toBe('D');
    expect(state.speedKmh).toBeCloseTo(expected.vehicle.speedKmh, 1);
    expect(state.speedKmh).toBe(38.46);
    expect(state.position!.lat).toBeCloseTo(loadScenario('urban').stateAt(160.2).position.lat, 6);
  });
});
