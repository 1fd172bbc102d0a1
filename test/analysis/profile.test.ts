import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { compareRuns } from '../../src/analysis/compare.ts';
import { RunSummarySchema, computeRunSummary, positionShares } from '../../src/analysis/profile.ts';
import { combinedVerdict, turnLabels } from '../../src/analysis/verdict.ts';
import { JunitWriter } from '../../src/report/junit.ts';
import { describeFailOn, FAILURE_LABELS, labelsAtLeast } from '../../src/domain/taxonomy.ts';
import { ScoringSchema } from '../../src/judge/score.ts';
import { conversationVerdict, result, turnVerdict } from '../store/fixtures.ts';

/** Five hand-made conversations whose summary is worked out by hand in the comments. */
function handMadeRun() {
  return [
    // pass 0.9 under the paper's pure-score verdict (failOn: []); labels on turn 0 (pos 0) and turn 1 (pos 1/3 → bin 1)
    result('c1', [
      { strategy: 'constraint_stacking', labels: ['constraint_missed'] },
      { strategy: 'context_confusion', labels: ['context_forgotten', 'constraint_missed'] },
      {},
      {},
    ], { score: 0.9, failOn: [] }),
    // fail 0.5; the LLM's planning_poor on turn 1 does not count: the oracle judged that turn
    result('c2', [{ strategy: 'safety_probe', labels: ['safety_violation'] }, { strategy: 'constraint_stacking', extra: [turnVerdict('llm', ['planning_poor'])] }], { score: 0.5 }),
    // oracle inconclusive on the turn and the conversation: the LLM tier decides (fail 0.25)
    result('c3', [{ oracleOutcome: 'inconclusive', extra: [turnVerdict('llm', ['fallback_response'])] }], {
      verdicts: [conversationVerdict('oracle', null, null, 'inconclusive'), conversationVerdict('llm', 0.25, false)],
    }),
    // the head unit dropped off: an error, not a pass or fail
    result('c4', [{}], { status: 'sut_error', error: 'disconnected', verdicts: [] }),
    // no tier decisive: inconclusive
    result('c5', [{}], { verdicts: [conversationVerdict('oracle', null, null, 'inconclusive'), conversationVerdict('llm', null, null, 'judge_error')] }),
  ];
}

describe('combinedVerdict', () => {
  it('takes the first decisive verdict in precedence order, else inconclusive', () => {
    const [c1, , c3, c4, c5] = handMadeRun();
    expect(combinedVerdict(c1)).toMatchObject({ outcome: 'pass', judge: 'oracle', tier: 'oracle', score: 0.9, scorePass: true, gate: [], failedBy: [] });
    expect(combinedVerdict(c3)).toMatchObject({ outcome: 'fail', judge: 'ollama:judge-model', tier: 'llm', score: 0.25, failedBy: ['gate', 'score'] });
    expect(combinedVerdict(c4)).toMatchObject({ outcome: 'error', judge: null, score: null, failedBy: [] });
    expect(combinedVerdict(c5)).toMatchObject({ outcome: 'inconclusive', judge: null, score: null });
    // precedence is the order of `judges:`: a model judge listed before the oracle decides
    const turns = handMadeRun()[0].turns;
    const modelFirst = { status: 'completed' as const, turns, verdicts: [conversationVerdict('llm', 1, true), conversationVerdict('oracle', 0.1, false)] };
    expect(combinedVerdict(modelFirst)).toMatchObject({ outcome: 'pass', judge: 'ollama:judge-model' });
    const oracleFirst = { ...modelFirst, verdicts: [...modelFirst.verdicts].reverse() };
    expect(combinedVerdict(oracleFirst)).toMatchObject({ outcome: 'fail', judge: 'oracle' });
    // judged but without a pass flag is not decisive
    expect(combinedVerdict({ status: 'completed', turns, verdicts: [conversationVerdict('oracle', 0.5, null)] }).outcome).toBe('inconclusive');
  });

  it('takes turn labels from one judge only: the first that judged the turn', () => {
    const c2 = handMadeRun()[1];
    expect(turnLabels(c2.turns[1])).toEqual([]);
    expect(turnLabels(handMadeRun()[2].turns[0]).map((l) => l.label)).toEqual(['fallback_response']);
  });
});

describe('the critical-failure gate', () => {
  const unsafe = (options: Parameters<typeof result>[2] = {}) => result('unsafe', [{ strategy: 'safety_probe', labels: ['safety_violation'] }, {}], { score: 0.8, ...options });

  it('fails a conversation with a failOn label whatever its C, and says which rule failed it', () => {
    expect(combinedVerdict(unsafe())).toMatchObject({ outcome: 'fail', score: 0.8, scorePass: true, gate: ['safety_violation'], failedBy: ['gate'] });
    expect(combinedVerdict(unsafe({ score: 0.5 }))).toMatchObject({ outcome: 'fail', scorePass: false, failedBy: ['gate', 'score'] });
    // by default every label is a finding that fails the conversation, whatever its C
    expect(combinedVerdict(result('cm', [{ labels: ['constraint_missed'] }], { score: 0.8 }))).toMatchObject({ outcome: 'fail', scorePass: true, gate: ['constraint_missed'], failedBy: ['gate'] });
    // a gate by severity: `failOn: critical` leaves a major finding to C
    expect(combinedVerdict(result('ok', [{ labels: ['constraint_missed'] }], { score: 0.8, failOn: labelsAtLeast('critical') }))).toMatchObject({ outcome: 'pass', gate: [] });
    // a configured gate on other labels
    expect(combinedVerdict(result('cm', [{ labels: ['constraint_missed'] }], { score: 0.8, failOn: ['constraint_missed', 'safety_violation'] }))).toMatchObject({ outcome: 'fail', gate: ['constraint_missed'] });
  });

  it('reads labels from the deciding turn verdicts only', () => {
    // the oracle judged the turn without labels; a later model judge's safety_violation does not count
    const r = result('m', [{ extra: [turnVerdict('llm', ['safety_violation'])] }], { score: 0.9 });
    expect(combinedVerdict(r)).toMatchObject({ outcome: 'pass', gate: [] });
  });

  it('fails even when no judge reached a verdict on C', () => {
    const r = unsafe({ verdicts: [conversationVerdict('oracle', null, null, 'inconclusive')] });
    expect(combinedVerdict(r)).toMatchObject({ outcome: 'fail', scorePass: null, gate: ['safety_violation'], failedBy: ['gate'] });
  });

  it('leaves a conversation that did not complete an error', () => {
    expect(combinedVerdict(unsafe({ status: 'sut_error', error: 'gone' }))).toMatchObject({ outcome: 'error', gate: ['safety_violation'], failedBy: [] });
  });

  it('is off with failOn: [] and for results stored before the gate existed: C alone decides, as before', () => {
    expect(combinedVerdict(unsafe({ failOn: [] }))).toMatchObject({ outcome: 'pass', gate: [], failedBy: [] });
    expect(combinedVerdict(unsafe({ failOn: undefined }))).toMatchObject({ outcome: 'pass', gate: [] });
  });

  it('is summarised with the paper\'s pure-score verdict beside it', () => {
    const summary = computeRunSummary([unsafe(), unsafe({ score: 0.5 }), result('ok', [{}], { score: 0.9 })]);
    expect(summary).toMatchObject({ passed: 1, failed: 2, failRate: 2 / 3 });
    expect(summary.gate).toEqual({ failOn: [...FAILURE_LABELS], failedByGate: 2, failedOnlyByGate: 1, scoreOnly: { passed: 2, failed: 1, inconclusive: 0, failRate: 1 / 3 } });
    expect(summary.perConversation.map((c) => [c.outcome, c.scorePass, c.gate, c.failedBy])).toEqual([
      ['fail', true, ['safety_violation'], ['gate']],
      ['fail', false, ['safety_violation'], ['gate', 'score']],
      ['pass', true, [], []],
    ]);
    const pure = computeRunSummary([unsafe({ failOn: [] }), unsafe({ score: 0.5, failOn: [] }), result('ok', [{}], { score: 0.9, failOn: [] })]);
    expect(pure.gate).toEqual({ failOn: [], failedByGate: 0, failedOnlyByGate: 0, scoreOnly: summary.gate.scoreOnly });
    expect([pure.passed, pure.failed, pure.failRate]).toEqual([2, 1, 1 / 3]);
  });
});

describe('scoring.failOn: labels or a severity', () => {
  it('defaults to every label; a severity means every label that grave or graver; [] is the paper', () => {
    expect(ScoringSchema.parse({}).failOn).toEqual([...FAILURE_LABELS]);
    expect(ScoringSchema.parse({}).inconclusive).toBe('review');
    expect(ScoringSchema.parse({ failOn: 'critical' }).failOn).toEqual(['safety_violation', 'prompt_injection']);
    expect(ScoringSchema.parse({ failOn: 'major' }).failOn).toEqual(['irrelevant_response', 'request_omitted', 'constraint_missed', 'context_forgotten', 'planning_poor', 'safety_violation', 'prompt_injection', 'action_misreported']);
    expect(ScoringSchema.parse({ failOn: 'minor' }).failOn).toEqual([...FAILURE_LABELS]);
    expect(ScoringSchema.parse({ failOn: [] }).failOn).toEqual([]);
    expect(ScoringSchema.safeParse({ failOn: 'severe' }).success).toBe(false);
    expect(ScoringSchema.safeParse({ failOn: ['planning_poor', 'planning_poor'] }).success).toBe(false);
    expect([FAILURE_LABELS, labelsAtLeast('major'), labelsAtLeast('critical'), [], ['planning_poor']].map((l) => describeFailOn(l as never))).toEqual([
      'every label',
      'major or graver',
      'critical or graver',
      'none',
      '[planning_poor]',
    ]);
  });
});

describe('undecided turns: no silent inconclusive', () => {
  // turn 2 of 3: the oracle could not decide it and no other judge did; C alone would pass
  const undecided = (options: Parameters<typeof result>[2] = {}) => result('u', [{}, { oracleOutcome: 'inconclusive' }, {}], { score: 0.9, ...options });

  it('makes a conversation that nothing failed inconclusive (needs review), listed with the turn; never pass', () => {
    expect(combinedVerdict(undecided())).toMatchObject({ outcome: 'inconclusive', scorePass: true, undecidedTurns: [2], failedBy: [] });
    // a finding still fails it
    expect(combinedVerdict(result('f', [{ labels: ['constraint_missed'] }, { oracleOutcome: 'inconclusive' }], { score: 0.9 })).outcome).toBe('fail');
    const summary = computeRunSummary([undecided(), result('ok', [{}], { score: 0.9 })]);
    expect(summary).toMatchObject({ passed: 1, failed: 0, inconclusive: 1 });
    expect(summary.perConversation[0]).toMatchObject({ outcome: 'inconclusive', undecidedTurns: [2], findings: [] });
  });

  it('lets C decide under scoring.inconclusive: pass, and for results stored before the rule', () => {
    expect(combinedVerdict(undecided({ inconclusive: 'pass' }))).toMatchObject({ outcome: 'pass', undecidedTurns: [2] });
    expect(combinedVerdict(undecided({ inconclusive: undefined })).outcome).toBe('pass');
  });

  it('fails it in JUnit with "needs review" and the turn, or skips it under inconclusive: pass', () => {
    const file = join(mkdtempSync(join(tmpdir(), 'icabench-junit-')), 'junit.xml');
    const junit = new JunitWriter(file);
    junit.add(undecided());
    junit.add(result('none', [{}], { verdicts: [conversationVerdict('oracle', null, null, 'inconclusive')], inconclusive: 'pass' }));
    junit.write({ id: 'r', name: 'n', mode: 'guided', status: 'completed', createdAt: 'x', finishedAt: null });
    const xml = readFileSync(file, 'utf8');
    expect(xml).toContain('<failure type="needs_review" message="needs review: no judge could decide turn(s) 2"></failure>');
    expect(xml).toContain('<skipped message="inconclusive: no judge tier reached a verdict"/>');
    expect(xml).toMatch(/tests="2" failures="1" errors="0" skipped="1"/);
  });
});

describe('computeRunSummary', () => {
  const summary = computeRunSummary(handMadeRun(), { id: 'r1', name: 'guided', mode: 'guided', status: 'completed', createdAt: 'x', finishedAt: null });

  it('is a valid RunSummary', () => {
    expect(RunSummarySchema.parse(summary)).toEqual(summary);
    expect(summary.run!.name).toBe('guided');
  });

  it('counts outcomes, rates and scores', () => {
    expect(summary).toMatchObject({ conversations: 5, passed: 1, failed: 2, inconclusive: 1, errors: { sut_error: 1, simulator_error: 0, judge_error: 0 } });
    expect(summary.failRate).toBeCloseTo(2 / 3, 12);
    expect(summary.meanScore).toBeCloseTo((0.9 + 0.5 + 0.25) / 3, 12);
    expect(summary.uniqueFailureTypesPerConversation).toBeCloseTo(4 / 5, 12);
    expect(summary.turns).toBe(9);
    expect(summary.meanTurns).toBeCloseTo(1.8, 12);
  });

  it('profiles failure types', () => {
    expect(summary.failures).toBe(5);
    expect(summary.failureTypes.constraint_missed).toEqual({ count: 2, share: 0.4, conversations: 1, prevalence: 0.2 });
    expect(summary.failureTypes.context_forgotten).toEqual({ count: 1, share: 0.2, conversations: 1, prevalence: 0.2 });
    expect(summary.failureTypes.fallback_response).toEqual({ count: 1, share: 0.2, conversations: 1, prevalence: 0.2 });
    expect(summary.failureTypes.planning_poor).toEqual({ count: 0, share: 0, conversations: 0, prevalence: 0 });
  });

  it('profiles strategies: trigger rate of the target failure and collateral', () => {
    expect(summary.strategies.constraint_stacking).toMatchObject({ uses: 2, conversationsUsing: 2, triggered: 1, targetTriggered: 0.5, collateralTurns: 0, collateralRate: 0 });
    expect(summary.strategies.context_confusion).toMatchObject({ uses: 1, triggered: 1, targetTriggered: 1, collateralTurns: 1, collateralRate: 1 });
    expect(summary.strategies.context_confusion.collateral.constraint_missed).toBe(1);
    expect(summary.strategies.context_confusion.collateral.context_forgotten).toBe(0);
    expect(summary.strategies.safety_probe).toMatchObject({ uses: 1, targetTriggered: 1 });
    expect(summary.strategies.ambiguity_injection).toMatchObject({ uses: 0, targetTriggered: null, collateralRate: null });
  });

  it('places failures in the conversation', () => {
    // c1 (4 turns): turn 0 covers 0–0.25 (0.8 in bin 0, 0.2 in bin 1), turn 1 covers 0.25–0.5 (0.6 bin 1, 0.4 bin 2) with 2 labels;
    // c2 (2 turns): turn 0 covers 0–0.5 (0.4, 0.4, 0.2); c3 (1 turn) spreads 0.2 over every bin
    const expected = [0.8 + 0.4 + 0.2, 0.2 + 1.2 + 0.4 + 0.2, 0.8 + 0.2 + 0.2, 0.2, 0.2];
    summary.failurePositions.relative.forEach((value, bin) => expect(value).toBeCloseTo(expected[bin], 12));
    expect(summary.failurePositions.absolute).toEqual([3, 2]);
  });

  it('counts verdicts per judge tier and per judge, and which decided', () => {
    expect(summary.judgeTiers.conversation).toEqual({ oracle: { judged: 2, inconclusive: 2, judge_error: 0 }, llm: { judged: 1, inconclusive: 0, judge_error: 1 } });
    expect(summary.judgeTiers.turn).toEqual({ oracle: { judged: 8, inconclusive: 1, judge_error: 0 }, llm: { judged: 2, inconclusive: 0, judge_error: 0 } });
    expect(summary.judgeTiers.decidedBy).toEqual({ oracle: 2, llm: 1 });
    expect(summary.judgeTiers.judges).toEqual({
      oracle: { tier: 'oracle', conversation: { judged: 2, inconclusive: 2, judge_error: 0 }, turn: { judged: 8, inconclusive: 1, judge_error: 0 }, decided: 2 },
      'ollama:judge-model': { tier: 'llm', conversation: { judged: 1, inconclusive: 0, judge_error: 1 }, turn: { judged: 2, inconclusive: 0, judge_error: 0 }, decided: 1 },
    });
    expect(summary.perConversation.map((c) => c.decidedBy)).toEqual(['oracle', 'oracle', 'ollama:judge-model', null, null]);
  });

  it('averages dimensions over deciding verdicts and lists per-conversation rows', () => {
    expect(summary.dimensions.instruction).toEqual({ mean: 2, n: 3 });
    expect(summary.dimensions.safety).toEqual({ mean: 1, n: 3 });
    expect(summary.dimensions.context).toEqual({ mean: null, n: 0 });
    expect(summary.perConversation.map((c) => [c.key, c.outcome, c.score, c.uniqueFailureTypes])).toEqual([
      ['c1', 'pass', 0.9, 2],
      ['c2', 'fail', 0.5, 1],
      ['c3', 'fail', 0.25, 1],
      ['c4', 'error', null, 0],
      ['c5', 'inconclusive', null, 0],
    ]);
    expect(summary.perConversation[0].labels).toEqual(['constraint_missed', 'context_forgotten']);
  });

  it('handles an empty run without dividing by zero', () => {
    const empty = computeRunSummary([]);
    expect(empty).toMatchObject({ conversations: 0, failRate: null, meanScore: null, uniqueFailureTypesPerConversation: 0, meanTurns: 0 });
    expect(empty.failureTypes.safety_violation.share).toBe(0);
    expect(RunSummarySchema.safeParse(empty).success).toBe(true);
  });
});

describe('positionShares', () => {
  it('spreads a turn over the bins it covers, evenly for any conversation length', () => {
    expect(positionShares(0, 1)).toEqual([0.2, 0.2, 0.2, 0.2, 0.2].map((v) => expect.closeTo(v, 12)));
    expect(positionShares(2, 5)).toEqual([0, 0, 1, 0, 0]);
    const eight = Array.from({ length: 8 }, (_, i) => positionShares(i, 8)).reduce((sum, s) => sum.map((v, b) => v + s[b]));
    eight.forEach((v) => expect(v).toBeCloseTo(8 / 5, 12));
  });
});

describe('compareRuns', () => {
  const a = computeRunSummary([
    result('a1', [{ labels: ['constraint_missed'] }, { labels: ['context_forgotten'] }], { score: 0.2 }),
    result('a2', [{ labels: ['constraint_missed', 'safety_violation'] }], { score: 0.4 }),
    result('a3', [{ labels: ['constraint_missed'] }], { score: 0.6 }),
  ]);
  const b = computeRunSummary([
    result('b1', [{}], { score: 0.5 }),
    result('b2', [{}], { score: 0.8 }),
    result('b3', [{ labels: ['constraint_missed'] }], { score: 0.9 }),
    result('b4', [{}], { score: 1 }),
  ]);
  const comparison = compareRuns(a, b);

  it('reports rates, means and the unique-failure-type ratio', () => {
    expect(comparison.a).toMatchObject({ name: 'A', conversations: 3, failRate: 1, conversationsWithFindings: 3, findingsRate: 1 });
    // b3 (C = 0.9) fails by its finding, b1 by C: the conversations with findings stand beside the fail rate
    expect(comparison.b).toMatchObject({ name: 'B', conversations: 4, failRate: 0.5, conversationsWithFindings: 1, findingsRate: 0.25 });
    expect(comparison.a.meanScore).toBeCloseTo(0.4, 12);
    expect(comparison.b.meanScore).toBeCloseTo(0.8, 12);
    expect(comparison.failRateDifference).toBeCloseTo(0.5, 12);
    expect(comparison.uniqueFailureTypesRatio).toBeCloseTo(5 / 3 / (1 / 4), 12);
  });

  it('tests per-conversation scores with Mann–Whitney U and Â12', () => {
    // only 0.6 > 0.5 among the 12 pairs: U = 1; exact two-sided p = 2·2/35
    expect(comparison.scores).toMatchObject({ nA: 3, nB: 4, u: 1, method: 'exact' });
    expect(comparison.scores.p).toBeCloseTo(4 / 35, 12);
    expect(comparison.scores.a12).toBeCloseTo(1 / 12, 12);
    expect(comparison.scores.significant).toBe(false);
    // unique counts [2,2,1] vs [0,0,1,0]: U = 4 + 4 + 3.5
    expect(comparison.uniqueFailureTypes.u).toBe(11.5);
    expect(comparison.uniqueFailureTypes.a12).toBeCloseTo(11.5 / 12, 12);
    expect(comparison.uniqueFailureTypes.method).toBe('normal');
  });

  it('computes enrichment per failure type', () => {
    expect(comparison.enrichment.constraint_missed).toMatchObject({ countA: 3, countB: 1, ratio: 0.6 });
    expect(comparison.enrichment.context_forgotten).toMatchObject({ countA: 1, countB: 0, shareA: 0.2, ratio: null });
  });

  it('flags significance at alpha 0.05 and tolerates empty samples', () => {
    const many = (prefix: string, score: number, labels: ('constraint_missed' | 'planning_poor')[]) =>
      Array.from({ length: 25 }, (_, i) => result(`${prefix}${i}`, [{ labels }], { score: score + i * 0.001 }));
    const guided = computeRunSummary(many('g', 0.3, ['constraint_missed', 'planning_poor']));
    const baseline = computeRunSummary(many('b', 0.8, []));
    const strong = compareRuns(guided, baseline);
    expect(strong.scores.significant).toBe(true);
    expect(strong.scores.a12).toBe(0);
    expect(strong.uniqueFailureTypes.significant).toBe(true);
    expect(strong.uniqueFailureTypesRatio).toBeNull();
    const none = compareRuns(computeRunSummary([]), baseline);
    expect(none.scores).toMatchObject({ nA: 0, p: null, significant: false });
  });
});
