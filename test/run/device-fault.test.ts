import { afterEach, describe, expect, it } from 'vitest';
import { SutError } from '../../src/headunit/types.ts';
import { dialogueKind } from '../../src/kinds/dialogue/kind.ts';
import { openRig } from '../../src/kinds/dialogue/rig.ts';
import { conversationRig } from '../../src/kinds/dialogue/run.ts';
import { rigItemRunner } from '../../src/run/envelope.ts';
import { connectConfiguredHeadUnit } from '../../src/run/headunit.ts';
import type { ConnectedHeadUnit } from '../../src/run/connect.ts';
import { runKindCampaign } from '../../src/run/runner.ts';
import { AUDIO_DEVICE_FIX } from '../../src/system/audio-devices.ts';
import type { ResultStore } from '../../src/store/store.ts';
import { campaignFromYaml, tempStore } from '../kinds/dialogue/helpers.ts';

/**
 * A device of the rig that fails in the middle of a run (src/run/envelope.ts, KindRig.fault and ConnectedHeadUnit.deviceFault)
 * ends the run, resumable, with the device's line as the reason, instead of failing every conversation after it. The devices
 * here are fakes that fail on cue: test/voice/device-faults.test.ts shows a real acoustic link reporting such a failure when
 * its sound server goes away.
 */
const DEVICE_LINE = (field: string) => `audio device "bench_out" (${field}, playback): Connection failure: Connection terminated: ${AUDIO_DEVICE_FIX}`;
const CAMPAIGN = 'name: device-fault\nconversations: 6\nmaxTurns: [2]\nconcurrency: 1\nheadUnit: { type: reference }\nsimulator: template\njudges: [oracle]\n';

const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  while (cleanups.length) await cleanups.pop()!();
});

/** The stored conversations of a run: key and status, in plan order. */
function stored(store: ResultStore, runId: string): Array<{ key: string; status: string }> {
  return [...store.conversations(runId)].map((c) => ({ key: c.spec.key, status: c.status }));
}

describe('a device failing in the middle of a run', () => {
  it("the reference unit's device fails during the third conversation: two stored, the third not stored as the unit's failure, the run interrupted naming the device, its field and the fix; --resume completes it", { timeout: 120_000 }, async () => {
    const campaign = campaignFromYaml(CAMPAIGN);
    const store = tempStore((close) => cleanups.push(close));
    const reason = DEVICE_LINE('headUnit.acoustic.output');
    const reference = await connectConfiguredHeadUnit(campaign.config.headUnit, () => undefined, {});
    cleanups.push(() => reference.close());
    let sessions = 0;
    let failed: Error | null = null;
    // the unit's loudspeaker goes away as the third conversation starts: the conversation sees the unit fall silent
    const failing: ConnectedHeadUnit = {
      ...reference,
      async ensureReady() {
        if (++sessions === 3) {
          failed = new Error(reason);
          throw new SutError('timeout', 'head unit sent no reply within 5000 ms');
        }
        await reference.ensureReady();
      },
      deviceFault: () => failed,
      close: async () => undefined,
    };
    const rig = await openRig(campaign, { headUnit: failing });
    const first = await runKindCampaign(dialogueKind, campaign, { store, runner: rigItemRunner(conversationRig(rig, campaign, () => undefined)) });
    expect(first).toMatchObject({ status: 'interrupted', stopReason: reason, done: 2, planned: 6 });
    expect(store.getRun(first.runId)).toMatchObject({ status: 'interrupted', stored: 2 });
    const storedFirst = stored(store, first.runId);
    const third = [...store.remainingSpecs(first.runId)][0]!.key;
    // nothing was stored as a unit error: the conversation that ran into the device is the first of those still to run
    expect(storedFirst.map((c) => c.status)).not.toContain('sut_error');
    expect([...store.remainingSpecs(first.runId)]).toHaveLength(4);
    expect(storedFirst.map((c) => c.key)).not.toContain(third);

    const second = await runKindCampaign(dialogueKind, campaign, { store, resumeRunId: first.runId });
    expect(second).toMatchObject({ status: 'completed', stopReason: null, done: 6 });
    const storedAll = stored(store, first.runId);
    expect(storedAll).toHaveLength(6);
    expect(storedAll.slice(0, 2)).toEqual(storedFirst);
    expect(storedAll[2].key).toBe(third);
    expect(storedAll.every((c) => c.status !== 'sut_error')).toBe(true);
  });

  it("a rig's own fault (the bench's acoustic link) stops the run before the next conversation, and the one that ran into it is not stored", { timeout: 120_000 }, async () => {
    const campaign = campaignFromYaml(CAMPAIGN);
    const store = tempStore((close) => cleanups.push(close));
    const reason = DEVICE_LINE('voice.link.output');
    const rig = conversationRig(await openRig(campaign), campaign, () => undefined);
    let started = 0;
    let fault: string | null = null;
    const runner = rigItemRunner({
      ...rig,
      fault: () => fault,
      // the device fails while the fourth conversation runs; the conversation itself finishes
      run: (...args: Parameters<typeof rig.run>) => {
        if (++started === 4) fault = reason;
        return rig.run(...args);
      },
    });
    const lines: string[] = [];
    const result = await runKindCampaign(dialogueKind, campaign, { store, runner, log: (line) => lines.push(line) });
    expect(result).toMatchObject({ status: 'interrupted', stopReason: reason, done: 3 });
    expect(started).toBe(4);
    expect(store.getRun(result.runId)).toMatchObject({ stored: 3 });
    expect(lines).toContain(`run ${result.runId} stopped: ${reason}`);
  });
});
