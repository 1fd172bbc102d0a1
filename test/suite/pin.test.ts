import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { combinedVerdict } from '../../src/analysis/verdict.ts';
import { loadCampaignConfig } from '../../src/kinds/dialogue/config.ts';
import { suiteKind } from '../../src/kinds/suite/kind.ts';
import { loadSuiteCampaign } from '../../src/kinds/suite/suite-kind.ts';
import { buildTiers } from '../../src/kinds/dialogue/tiers.ts';
import type { ConversationResult, UtteranceAnnotation } from '../../src/domain/conversation.ts';
import { unitBuildOf } from '../../src/run/run-facts.ts';
import { storedRunChanges } from '../../src/report/changes-section.ts';
import { writeRunOutputs } from '../../src/report/write.ts';
import { ResultStore } from '../../src/store/store.ts';
import { loadSuite } from '../../src/suite/format.ts';
import { addToSuiteYaml, pinConversation, pinnedSuiteYaml } from '../../src/suite/pin.ts';
import { runCampaign } from '../helpers/run-kinds.ts';

const dir = mkdtempSync(join(tmpdir(), 'icabench-pin-'));
const store = ResultStore.open(join(dir, 'icabench.db'));
afterAll(() => store.close());

const UNSAFE = { profiles: ['unsafe_compliance' as const], rate: 1, rates: {}, seed: 7 };

/** Runs a suite campaign over `suite` against the reference unit with `faults`; its one run's conversations by key. */
async function runSuite(suite: string, faults: typeof UNSAFE | { profiles: [] }, name: string) {
  const config = join(dir, `${name}.yaml`);
  writeFileSync(config, `kind: suite\nname: ${name}\nsuites: [${suite}]\nconcurrency: 2\nheadUnit: { type: reference, faults: ${JSON.stringify(faults)} }\n`);
  const campaign = loadSuiteCampaign(config);
  const { runId, status } = await runCampaign(campaign, { kind: suiteKind, store, tiers: await buildTiers(campaign.config) });
  expect(status).toBe('completed');
  return { runId, results: new Map([...store.conversations(runId)].map((c) => [c.spec.key, c])) };
}

describe('pin as regression', () => {
  let failing: ConversationResult;
  let passing: ConversationResult;
  let campaignRun: string;
  beforeAll(async () => {
    // the traffic-jam campaign against a unit that complies with every unsafe request
    const campaign = loadCampaignConfig('bench-configs/traffic-jam-safety.yaml');
    campaign.config.conversations = 8;
    if (campaign.config.headUnit.type === 'reference') campaign.config.headUnit.faults = UNSAFE;
    campaignRun = (await runCampaign(campaign, { store, tiers: await buildTiers(campaign.config) })).runId;
    const results = [...store.conversations(campaignRun)];
    // a conversation failed only by its safety violation, and one that passed
    failing = results.find((r) => combinedVerdict(r).failedBy.join() === 'gate')!;
    passing = results.find((r) => combinedVerdict(r).outcome === 'pass')!;
    expect(failing).toBeDefined();
    expect(passing).toBeDefined();
  });

  it('keeps the user turns, each turn\'s vehicle context and meaning, and derives expectations from what passed', () => {
    const pinned = pinConversation(failing, { run: campaignRun });
    expect(pinned.id).toBe(failing.spec.key);
    expect(pinned.turns.map((t) => t.user)).toEqual(failing.turns.map((t) => t.utterance.text));
    const file = join(dir, 'one.yaml');
    writeFileSync(file, pinnedSuiteYaml(pinned, 'one'));
    const [script] = loadSuite(file).scripts;
    // the replayed contexts are the stored ones, turn by turn (gear, speed, position, clock)
    expect(script.turns.map((t) => t.context)).toEqual(failing.turns.map((t) => t.context));
    // the same meaning (an empty list of added constraints adds nothing, so it is not written)
    const meaning = (a: UtteranceAnnotation) => ({ ...a, addedConstraints: Object.fromEntries(Object.entries(a.addedConstraints).filter(([, added]) => added.length > 0)) });
    expect(script.turns.map((t) => t.annotation!)).toEqual(failing.turns.map((t) => meaning(t.utterance.annotation)));
    failing.turns.forEach((turn, i) => {
      const labelled = turn.verdicts[0].labels.length > 0;
      expect(script.turns[i].expect!.forbid).toBe('all');
      // a turn that failed expects no particular action; one that passed the actions it carried
      expect(script.turns[i].expect!.actions).toEqual(labelled ? [] : [...new Set(turn.reply!.actions.map((a) => a.type))]);
    });
  });

  it('a pinned failing conversation fails on the faulty unit and passes on the fixed one; a pinned passing one passes on both', async () => {
    const suite = join(dir, 'regressions.yaml');
    writeFileSync(suite, pinnedSuiteYaml(pinConversation(failing, { run: campaignRun }), 'regressions'));
    writeFileSync(suite, addToSuiteYaml(suite, pinConversation(passing, { run: campaignRun })));
    expect(readFileSync(suite, 'utf8')).toMatch(/^# Pinned by `icabench pin`/);
    // a failed turn's reply is no example of a right answer: only the turns that passed keep theirs as reference
    const pinned = pinConversation(failing, { run: campaignRun });
    const labelled = failing.turns.map((t) => t.verdicts[0].labels.length > 0);
    expect(labelled.some(Boolean)).toBe(true);
    expect(pinned.turns.map((t) => t.reference !== undefined)).toEqual(labelled.map((l) => !l));
    const faulty = await runSuite(suite, UNSAFE, 'faulty');
    const fixed = await runSuite(suite, { profiles: [] }, 'fixed');
    const outcome = (run: typeof faulty, key: string) => combinedVerdict(run.results.get(key)!);
    expect(outcome(faulty, failing.spec.key).outcome).toBe('fail');
    expect(outcome(faulty, failing.spec.key).failedBy).toEqual(['gate', 'expectation']);
    expect(outcome(fixed, failing.spec.key).outcome).toBe('pass');
    expect(outcome(faulty, passing.spec.key).outcome).toBe('pass');
    expect(outcome(fixed, passing.spec.key).outcome).toBe('pass');
    // the unmet expectation names what was found on the turn
    const unmet = faulty.results.get(failing.spec.key)!.turns.flatMap((t) => t.expectations?.checks ?? []).filter((c) => !c.met);
    expect(unmet.length).toBeGreaterThan(0);
    expect(unmet[0].detail).toMatch(/labelled safety_violation/);

    // each run recorded the build its unit announced; compare of the two builds lists exactly the pinned failure as fixed
    expect(unitBuildOf(store, faulty.runId)).toEqual({ unit: 'icabench-reference', version: '1.0.0', build: 'reference+unsafe_compliance@1', source: 'hello' });
    expect(unitBuildOf(store, fixed.runId)?.build).toBe('reference');
    const pairing = storedRunChanges(store, faulty.runId, fixed.runId);
    // two runs of one suite: the same conversations, paired
    if (!('changes' in pairing)) throw new Error(`not paired: ${pairing.unpaired}`);
    const { changes } = pairing;
    expect(changes.buildA).toBe('reference+unsafe_compliance@1');
    expect(changes.buildB).toBe('reference');
    expect(changes.fixed.map((c) => c.key)).toEqual([failing.spec.key]);
    expect(changes.regressed).toEqual([]);
    expect(changes.unchanged).toEqual({ pass: 1, fail: 0, other: 0 });
    // per turn: the violation is gone and the reply changed from compliance to a refusal
    const [turn] = changes.fixed[0].turns.filter((t) => t.labelsA.includes('safety_violation'));
    expect(turn.labelsB).toEqual([]);
    expect(turn.expectationsA).toBe(false);
    expect(turn.expectationsB).toBe(true);
    expect(turn.replyDiff.some((p) => p.op === 'added')).toBe(true);
    expect(turn.replyDiff.filter((p) => p.op !== 'added').map((p) => p.text).join('')).toBe(turn.replyA);
    expect(turn.replyDiff.filter((p) => p.op !== 'removed').map((p) => p.text).join('')).toBe(turn.replyB);
    // the report says why: the unmet expectation on its turn, and the outcome line
    const out = join(dir, 'faulty-report');
    (await writeRunOutputs(store, faulty.runId, out, { unit: 'the built-in reference head unit', faults: null })).summary;
    const html = readFileSync(join(out, 'report.html'), 'utf8');
    expect(html).toContain('unmet: no failure label (labelled safety_violation');
    expect(readFileSync(join(out, 'junit.xml'), 'utf8')).toContain('a scripted expectation did not hold');
    // the reverse direction is a regression
    const reverse = storedRunChanges(store, fixed.runId, faulty.runId);
    expect('changes' in reverse && reverse.changes.regressed.map((c) => c.key)).toEqual([failing.spec.key]);
  });
});
