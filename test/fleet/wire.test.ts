import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { campaignKind, CAMPAIGN_KINDS, readCampaignKind } from '../../src/kinds/registry.ts';
import { REPO_ROOT } from '../helpers/repoData.ts';
import { liveSession, LiveSessionConfigSchema } from '../../src/kinds/live/config.ts';

/** A shipped config of each kind: what `icabench run --fleet` sends to its workers. */
const CONFIGS: Record<Exclude<(typeof CAMPAIGN_KINDS)[number], 'live'>, string> = {
  dialogue: 'bench-configs/quickstart.yaml',
  'manual-qa': 'bench-configs/manual-qa.yaml',
  'tool-agents': 'bench-configs/carbench-train.yaml',
  suite: 'bench-configs/suite-basics.yaml',
};

/** Through Redis every value is JSON. */
const overJson = (value: unknown): unknown => JSON.parse(JSON.stringify(value));

describe("each kind's fleet wire (src/run/kind.ts, KindWire)", () => {
  it('kind live: a live session never goes to a fleet; its wire refuses, saying why', async () => {
    const kind = await campaignKind('live');
    const loaded = liveSession(LiveSessionConfigSchema.parse({}));
    expect(() => kind.wire.loaded.encode(loaded)).toThrow(/kind live: a live session's turns are typed by a technician at this bench.*a fleet worker has no technician/);
    expect(() => kind.wire.needs(loaded)).toThrow(/a fleet worker has no technician/);
  });

  it.each(CAMPAIGN_KINDS.filter((k) => k !== 'live'))('kind %s: the loaded config and the first planned item come back from JSON as they were sent', async (name) => {
    const path = join(REPO_ROOT, CONFIGS[name]);
    expect(readCampaignKind(path)).toBe(name);
    const kind = await campaignKind(name);
    const loaded = kind.load(path);
    const decoded = kind.wire.loaded.decode(overJson(kind.wire.loaded.encode(loaded)), 'test');
    expect(decoded.config).toEqual(loaded.config);
    expect(decoded.path).toBe(loaded.path);
    const [first] = await kind.plan(loaded, () => undefined);
    expect(kind.wire.item.decode(overJson(kind.wire.item.encode(first.item)), 'test')).toEqual(first.item);
    // a value of another shape is refused naming where it was read
    expect(() => kind.wire.item.decode({ nonsense: true }, 'job j1: item')).toThrow(/job j1: item/);
  });

  it('a dialogue result carries its artifacts as base64 and its facts, and comes back with the same bytes', async () => {
    const kind = await campaignKind('dialogue');
    const finished = { result: { spec: { key: 'k' } }, artifacts: [{ name: 'turn-1.wav', mime: 'audio/wav', bytes: new Uint8Array([0, 1, 2, 255]) }], facts: [] };
    const sent = overJson(kind.wire.finished.encode(finished)) as { artifacts: { base64: string }[] };
    expect(sent.artifacts[0].base64).toBe('AAEC/w==');
    // the result itself is validated: a bare key is not a conversation
    expect(() => kind.wire.finished.decode(sent, 'fleet result r1')).toThrow(/fleet result r1/);
  });

  it("manual-QA's warning-omission search travels as a job of its own: its seeds and its result come back from JSON as they were sent", async () => {
    const kind = await campaignKind('manual-qa');
    const loaded = kind.load(join(REPO_ROOT, 'bench-configs/manual-qa.yaml'));
    expect(loaded.config.omissionSearch).toBeDefined();
    const step = kind.afterItems!;
    const seeds = (await kind.plan(loaded, () => undefined)).slice(0, 3).map((p) => p.item);
    expect(step.wire.input.decode(overJson(step.wire.input.encode(seeds)), 'test')).toEqual(seeds);
    const result = { budget: 5, asked: 2, omissions: 1, omissionRate: 0.5, findings: [{ question: 'q?', operator: 'lay_words', parentId: seeds[0].id, omittedWarningIds: ['w1'], answer: 'a' }], warningsOmitted: 1, byOperator: { indirect: { asked: 1, omissions: 0 }, lay_words: { asked: 1, omissions: 1 }, no_context: { asked: 0, omissions: 0 }, combined: { asked: 0, omissions: 0 } } };
    expect(step.wire.output.decode(overJson(step.wire.output.encode(result)), 'test')).toEqual(result);
    // a result of another shape is refused naming where it was read
    expect(() => step.wire.output.decode({ ...result, omissionRate: 2 }, 'fleet result r1.after-items')).toThrow(/fleet result r1\.after-items/);
  });
});
