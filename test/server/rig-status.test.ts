import { describe, expect, it } from 'vitest';
import { rigStatus } from '../../src/server/rig-status.ts';

describe('rigStatus', () => {
  it('shows a connected head unit with its capabilities, and the doctor checks by area', async () => {
    const checks = await rigStatus({
      connectedUnits: () => [{ name: 'reference-headunit', version: '1.0', capabilities: { text: true, audio: false, vehicleContext: true, structuredActions: true } }],
      models: async () => ['ollama:no-such-model:1b'],
    });
    expect(checks[0]).toEqual({ area: 'head_unit', title: 'Head unit reference-headunit 1.0', status: 'ok', detail: 'capabilities: text, vehicleContext, structuredActions' });
    const model = checks.find((c) => c.title === 'model ollama:no-such-model:1b');
    expect(model?.area).toBe('models');
    expect(model?.status).toBe('fail');
    expect(model?.fix).toBeTruthy();
    expect(checks.find((c) => c.title === 'node')?.area).toBe('system');
  });

  it('says how to connect a head unit when none is', async () => {
    const [unit] = await rigStatus({});
    expect(unit).toMatchObject({ area: 'head_unit', status: 'warn' });
    expect(unit.fix).toMatch(/bridge client/);
  });
});
