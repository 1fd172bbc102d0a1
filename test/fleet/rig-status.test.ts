import { describe, expect, it } from 'vitest';
import type { WorkerStatus } from '../../src/fleet/protocol.ts';
import { fleetChecks } from '../../src/server/rig-status.ts';

const base: WorkerStatus = {
  id: 'bench-1@lab#10',
  rig: 'bench-1',
  host: 'lab',
  pid: 10,
  capabilities: ['text', 'vehicle'],
  transports: ['reference'],
  voice: null,
  concurrency: 2,
  state: 'ready',
  reason: null,
  current: ['r1/c00003-x-r0'],
  done: 7,
  at: '2026-11-25T18:00:00.000Z',
};

describe('rig status: fleet workers', () => {
  const now = Date.parse('2026-11-25T18:00:04.000Z');

  it('lists each worker with its rig, capabilities, current conversation and last heartbeat', async () => {
    const booth: WorkerStatus = { ...base, id: 'booth@lab#11', rig: 'booth', pid: 11, capabilities: ['audio', 'text'], voice: 'booth speaker+mic', current: [], done: 0 };
    const checks = await fleetChecks({ fleetWorkers: async () => [base, booth] }, now);
    expect(checks).toEqual([
      { area: 'fleet', title: 'Fleet worker bench-1 (lab, pid 10)', status: 'ok', detail: 'text+vehicle over reference; running r1/c00003-x-r0; 7 done; last heartbeat 4 s ago' },
      { area: 'fleet', title: 'Fleet worker booth (lab, pid 11)', status: 'ok', detail: 'audio+text over reference, voice booth speaker+mic; idle; 0 done; last heartbeat 4 s ago' },
    ]);
  });

  it('a worker that cannot reach its head unit fails with its reason and the fix; an empty fleet and an unreachable Redis are said so', async () => {
    const [lost] = await fleetChecks({ fleetWorkers: async () => [{ ...base, state: 'headunit_unreachable', reason: 'rig bench-1 cannot reach its head unit: timeout', current: [] }] }, now);
    expect(lost).toMatchObject({ status: 'fail', detail: expect.stringMatching(/^not taking jobs: rig bench-1 cannot reach its head unit: timeout; /), fix: expect.stringMatching(/restart the worker/) });
    expect(await fleetChecks({ fleetWorkers: async () => [] }, now)).toEqual([expect.objectContaining({ status: 'warn', detail: 'no worker is connected to the fleet' })]);
    expect(await fleetChecks({ fleetWorkers: async () => Promise.reject(new Error('connect ECONNREFUSED 127.0.0.1:6399')) }, now)).toEqual([
      expect.objectContaining({ status: 'fail', detail: "cannot read the fleet's workers: connect ECONNREFUSED 127.0.0.1:6399" }),
    ]);
    expect(await fleetChecks({}, now)).toEqual([]);
  });
});
