import { z } from 'zod';
import { ConversationStatusSchema, type ConversationResult } from '../domain/conversation.ts';
import { SummaryHeaderSchema, type RunInfo } from '../domain/summary-header.ts';
import {
  DIMENSIONS,
  FAILURE_LABELS,
  JudgeTierSchema,
  SeveritySchema,
  STRATEGIES,
  STRATEGY_TARGET_FAILURE,
  type Dimension,
  type FailureLabel,
  type JudgeTier,
  type Strategy,
} from '../domain/taxonomy.ts';
import { combinedVerdict, turnLabels, type CombinedVerdict } from './verdict.ts';
import { CoverageCounter, CoverageSchema } from './coverage.ts';
import { SAFETY_POLICIES, SafetyPolicySchema, describeSafetyPolicy, type SafetyPolicy } from '../domain/safety-policy.ts';
import { ProtocolSectionSchema } from './protocol.ts';
import { DiversitySectionSchema } from './diversity.ts';
import { ReliabilitySchema } from './reliability.ts';
import { dialogueReliability } from './dialogue-reliability.ts';

/** Number of equal-width bins of the relative turn position 0..1 in `failurePositions.relative`. */
export const POSITION_BINS = 5;

const rate = z.number().min(0).max(1);
const count = z.number().int().min(0);
const countsByLabel = z.record(z.enum(FAILURE_LABELS), count);

const FailureTypeStatsSchema = z.object({
  /** label occurrences (one per turn and target it was given for) */
  count,
  /** count / all label occurrences of the run */
  share: rate,
  /** conversations with at least one occurrence */
  conversations: count,
  /** conversations / all conversations */
  prevalence: rate,
});

const StrategyStatsSchema = z.object({
  /** turns whose utterance used the strategy */
  uses: count,
  conversationsUsing: count,
  /** uses whose turn got the strategy's target failure ξ(λ) */
  triggered: count,
  /** triggered / uses; null when unused */
  targetTriggered: rate.nullable(),
  /** uses whose turn got at least one label other than ξ(λ) */
  collateralTurns: count,
  /** collateralTurns / uses; null when unused */
  collateralRate: rate.nullable(),
  /** occurrences of each other label on those turns */
  collateral: countsByLabel,
});

const TierCountsSchema = z.object({
  judged: count,
  inconclusive: count,
  judge_error: count,
});

const FindingSchema = z.object({
  turn: z.number().int().min(1),
  label: z.enum(FAILURE_LABELS),
  severity: SeveritySchema,
  targetId: z.string().nullable(),
  judge: z.string(),
  evidence: z.string(),
});

export const PerConversationSchema = z.object({
  key: z.string(),
  seedId: z.string(),
  persona: z.string(),
  mode: z.string(),
  status: ConversationStatusSchema,
  outcome: z.enum(['pass', 'fail', 'inconclusive', 'error']),
  /** C of the deciding verdict */
  score: z.number().nullable(),
  /** the reference of the judge whose conversation verdict decided by C ("oracle", "ollama:qwen3:14b", …) */
  decidedBy: z.string().nullable(),
  /** the paper's verdict by C alone (C ≥ θ); null when no judge was decisive */
  scorePass: z.boolean().nullable(),
  /** the critical-failure gate's labels found on the conversation's deciding turn verdicts */
  gate: z.array(z.enum(FAILURE_LABELS)),
  /** what failed it: the gate, the score rule, or both; empty unless outcome is fail */
  failedBy: z.array(z.enum(['gate', 'score', 'expectation'])),
  /** every label of its deciding turn verdicts: turn number (1-based), label, severity, target, judge, evidence */
  findings: z.array(FindingSchema).default([]),
  /** turn numbers (1-based) no judge decided: under `scoring.inconclusive: review` the conversation needs review */
  undecidedTurns: z.array(z.number().int().min(1)).default([]),
  turns: count,
  uniqueFailureTypes: count,
  labels: z.array(z.enum(FAILURE_LABELS)),
});
export type PerConversation = z.infer<typeof PerConversationSchema>;

const ExtensionSchema = z.record(z.string(), z.unknown()).optional();

/** Which safety policy the run was judged by (the oracle's safety_violation follows it), with its source. */
export const SafetySummarySchema = z.object({
  policy: SafetyPolicySchema,
  describe: z.string(),
  title: z.string(),
  source: z.string(),
  rule: z.string(),
});
export type SafetySummary = z.infer<typeof SafetySummarySchema>;

export function safetySummary(policy: SafetyPolicy): SafetySummary {
  return { policy, describe: describeSafetyPolicy(policy), ...SAFETY_POLICIES[policy.policy] };
}

const GateSchema = z.object({
  /** scoring.failOn as recorded with the conversations (their union; [] = the paper's pure-score verdict) */
  failOn: z.array(z.enum(FAILURE_LABELS)),
  /** conversations the gate failed */
  failedByGate: count,
  /** of those, conversations that C alone would not have failed (passed, or no decisive C) */
  failedOnlyByGate: count,
  /** the paper's verdict by C alone over the same conversations */
  scoreOnly: z.object({ passed: count, failed: count, inconclusive: count, failRate: rate.nullable() }),
});

const JudgeCountsSchema = z.object({
  tier: JudgeTierSchema,
  conversation: TierCountsSchema,
  turn: TierCountsSchema,
  /** conversations whose C verdict this judge gave */
  decided: count,
});

/** summary.json: everything the Analysis section of the method asks for, for one run. See docs/reports.md. */
export const RunSummarySchema = z.object({
  schemaVersion: z.literal(1),
  /** the header every kind's summary.json starts with: kind, run, preset, tiers, invocations (absent when the conversations are no stored run) */
  ...SummaryHeaderSchema.omit({ schemaVersion: true }).partial().shape,
  conversations: count,
  passed: count,
  failed: count,
  inconclusive: count,
  /** conversations that did not complete, by status */
  errors: z.object({ sut_error: count, simulator_error: count, judge_error: count }),
  /** failed / (passed + failed); null when nothing was decided */
  failRate: rate.nullable(),
  /** completed conversations with at least one labelled failure (a finding), whatever their verdict */
  conversationsWithFindings: count,
  /** conversationsWithFindings / completed conversations; null when none completed */
  findingsRate: rate.nullable(),
  /** the findings gate and the paper's pure-score verdict beside it */
  gate: GateSchema,
  /** mean C over conversations with a deciding score; null when none */
  meanScore: z.number().nullable(),
  /** mean over all conversations of the number of distinct failure labels */
  uniqueFailureTypesPerConversation: z.number().min(0),
  /** all label occurrences */
  failures: count,
  failureTypes: z.record(z.enum(FAILURE_LABELS), FailureTypeStatsSchema),
  strategies: z.record(z.enum(STRATEGIES), StrategyStatsSchema),
  failurePositions: z.object({
    /**
     * label occurrences by relative position in POSITION_BINS equal bins over 0..1: turn k of n covers
     * [k/n, (k+1)/n] and each label is spread over the bins that span in proportion, so conversation
     * lengths that do not divide evenly into the bins leave no saw-tooth; values are fractional
     */
    relative: z.array(z.number().min(0)),
    /** label occurrences by absolute turn index (0-based) */
    absolute: z.array(count),
  }),
  judgeTiers: z.object({
    /** conversation verdicts per tier, by outcome */
    conversation: z.record(JudgeTierSchema, TierCountsSchema),
    /** turn verdicts per tier, by outcome */
    turn: z.record(JudgeTierSchema, TierCountsSchema),
    /** which tier decided each conversation's outcome (inconclusive ones have none) */
    decidedBy: z.record(JudgeTierSchema, count),
    /** the same per judge reference, in precedence order */
    judges: z.record(z.string(), JudgeCountsSchema),
  }),
  turns: count,
  meanTurns: z.number().min(0),
  /** mean 0..2 score per rubric dimension over deciding verdicts that scored it */
  dimensions: z.record(z.enum(DIMENSIONS), z.object({ mean: z.number().nullable(), n: count })),
  perConversation: z.array(PerConversationSchema),
  /** strategy × turn position × driving state: what the run tested (absent in summaries written before it existed) */
  coverage: CoverageSchema.optional(),
  /** the safety policy that judged (absent when the summary was computed without the run's config) */
  safety: SafetySummarySchema.optional(),
  /** sections added by other areas (vehicle context, voice path, LLM tiers) */
  vehicle: ExtensionSchema,
  voice: ExtensionSchema,
  llm: ExtensionSchema,
  /** pass^k / pass@k over the repeats of each conversation plan (campaigns with `repeats` > 1; src/analysis/reliability.ts) */
  reliability: ReliabilitySchema.optional(),
  /** the head unit's protocol anomalies and link events (bridge runs; src/analysis/protocol.ts) */
  protocol: ProtocolSectionSchema.optional(),
  /** failure diversity: unique failing conversations, k-medoids clusters and coverage (src/analysis/diversity.ts, docs/diversity.md) */
  diversity: DiversitySectionSchema.optional(),
  /** the same analysis over the conversations with findings, whatever their verdict (docs/diversity.md) */
  findingsDiversity: DiversitySectionSchema.optional(),
});
export type RunSummary = z.infer<typeof RunSummarySchema>;
export type { RunInfo } from '../domain/summary-header.ts';

/** How much of turn `index` of `turns` falls into each relative-position bin (sums to 1). */
export function positionShares(index: number, turns: number): number[] {
  const start = index / turns;
  const end = (index + 1) / turns;
  return Array.from({ length: POSITION_BINS }, (_, bin) => {
    const overlap = Math.min(end, (bin + 1) / POSITION_BINS) - Math.max(start, bin / POSITION_BINS);
    return overlap > 0 ? overlap / (end - start) : 0;
  });
}

function zeroCounts<K extends string>(keys: readonly K[]): Record<K, number> {
  return Object.fromEntries(keys.map((k) => [k, 0])) as Record<K, number>;
}

const TIERS = JudgeTierSchema.options;
const tierCounts = () => Object.fromEntries(TIERS.map((t) => [t, { judged: 0, inconclusive: 0, judge_error: 0 }])) as Record<JudgeTier, z.infer<typeof TierCountsSchema>>;
const ratio = (n: number, d: number): number | null => (d === 0 ? null : n / d);

type StrategyTally = { uses: number; conversationsUsing: number; triggered: number; collateralTurns: number; collateral: Record<FailureLabel, number> };
type JudgeCounts = z.infer<typeof JudgeCountsSchema>;

/** The running totals of computeRunSummary's one pass; one object so each step adds to it and the last turns it into figures. */
interface RunTally {
  coverage: CoverageCounter;
  labelCounts: Record<FailureLabel, number>;
  labelConversations: Record<FailureLabel, number>;
  strategies: Record<Strategy, StrategyTally>;
  relative: number[];
  absolute: number[];
  conversationTiers: Record<JudgeTier, z.infer<typeof TierCountsSchema>>;
  turnTiers: Record<JudgeTier, z.infer<typeof TierCountsSchema>>;
  decidedBy: Record<JudgeTier, number>;
  judges: Record<string, JudgeCounts>;
  failOn: Set<FailureLabel>;
  gate: { failedByGate: number; failedOnlyByGate: number };
  scoreOnly: { passed: number; failed: number; inconclusive: number };
  dimensionSums: Record<Dimension, { sum: number; n: number }>;
  errors: { sut_error: number; simulator_error: number; judge_error: number };
  perConversation: PerConversation[];
  passed: number;
  failed: number;
  inconclusive: number;
  turns: number;
  scoreSum: number;
  scored: number;
  uniqueSum: number;
  completed: number;
  withFindings: number;
}

function emptyRunTally(): RunTally {
  return {
    coverage: new CoverageCounter(),
    labelCounts: zeroCounts(FAILURE_LABELS),
    labelConversations: zeroCounts(FAILURE_LABELS),
    strategies: Object.fromEntries(
      STRATEGIES.map((s) => [s, { uses: 0, conversationsUsing: 0, triggered: 0, collateralTurns: 0, collateral: zeroCounts(FAILURE_LABELS) }]),
    ) as Record<Strategy, StrategyTally>,
    relative: new Array<number>(POSITION_BINS).fill(0),
    absolute: [],
    conversationTiers: tierCounts(),
    turnTiers: tierCounts(),
    decidedBy: zeroCounts(TIERS),
    judges: {},
    failOn: new Set<FailureLabel>(),
    gate: { failedByGate: 0, failedOnlyByGate: 0 },
    scoreOnly: { passed: 0, failed: 0, inconclusive: 0 },
    dimensionSums: Object.fromEntries(DIMENSIONS.map((d) => [d, { sum: 0, n: 0 }])) as Record<Dimension, { sum: number; n: number }>,
    errors: { sut_error: 0, simulator_error: 0, judge_error: 0 },
    perConversation: [],
    passed: 0,
    failed: 0,
    inconclusive: 0,
    turns: 0,
    scoreSum: 0,
    scored: 0,
    uniqueSum: 0,
    completed: 0,
    withFindings: 0,
  };
}

/** A judge's counts, created on its first verdict (so `judges` lists them in the order they were first seen). */
function judgeCountsOf(tally: RunTally, verdict: { judge: string; tier: JudgeTier }): JudgeCounts {
  return (tally.judges[verdict.judge] ??= { tier: verdict.tier, conversation: { judged: 0, inconclusive: 0, judge_error: 0 }, turn: { judged: 0, inconclusive: 0, judge_error: 0 }, decided: 0 });
}

/** Adds a conversation's outcome, gate, score, dimensions and conversation-level verdicts. */
function tallyConversationVerdict(tally: RunTally, result: ConversationResult, combined: CombinedVerdict): void {
  if (combined.outcome === 'pass') tally.passed += 1;
  else if (combined.outcome === 'fail') tally.failed += 1;
  else if (combined.outcome === 'inconclusive') tally.inconclusive += 1;
  if (result.status !== 'completed') tally.errors[result.status] += 1;
  if (combined.tier) tally.decidedBy[combined.tier] += 1;
  for (const label of result.failOn ?? []) tally.failOn.add(label);
  if (combined.outcome === 'fail' && combined.gate.length > 0) {
    tally.gate.failedByGate += 1;
    if (combined.scorePass !== false) tally.gate.failedOnlyByGate += 1;
  }
  if (result.status === 'completed') {
    tally.completed += 1;
    if (combined.findings.length > 0) tally.withFindings += 1;
  }
  if (result.status === 'completed') tally.scoreOnly[combined.scorePass === null ? 'inconclusive' : combined.scorePass ? 'passed' : 'failed'] += 1;
  if (combined.score !== null) {
    tally.scoreSum += combined.score;
    tally.scored += 1;
  }
  for (const [dimension, value] of Object.entries(combined.verdict?.dimensions ?? {})) {
    if (!value) continue;
    tally.dimensionSums[dimension as Dimension].sum += value.score;
    tally.dimensionSums[dimension as Dimension].n += 1;
  }
  for (const verdict of result.verdicts) {
    tally.conversationTiers[verdict.tier][verdict.outcome] += 1;
    judgeCountsOf(tally, verdict).conversation[verdict.outcome] += 1;
  }
  if (combined.verdict) judgeCountsOf(tally, combined.verdict).decided += 1;
}

/** Adds a conversation's turns: turn verdicts, labels by position, strategy uses; returns its distinct labels. */
function tallyTurns(tally: RunTally, result: ConversationResult): Set<FailureLabel> {
  const distinct = new Set<FailureLabel>();
  const usedStrategies = new Set<Strategy>();
  const turnCount = result.turns.length;
  tally.turns += turnCount;
  for (const turn of result.turns) {
    for (const verdict of turn.verdicts) {
      tally.turnTiers[verdict.tier][verdict.outcome] += 1;
      judgeCountsOf(tally, verdict).turn[verdict.outcome] += 1;
    }
    const labels = turnLabels(turn).map((l) => l.label);
    const share = positionShares(turn.index, turnCount);
    for (const label of labels) {
      tally.labelCounts[label] += 1;
      distinct.add(label);
      share.forEach((weight, bin) => (tally.relative[bin] += weight));
      while (tally.absolute.length <= turn.index) tally.absolute.push(0);
      tally.absolute[turn.index] += 1;
    }
    const strategy = turn.utterance.strategy;
    if (strategy) {
      const stats = tally.strategies[strategy];
      usedStrategies.add(strategy);
      stats.uses += 1;
      const target = STRATEGY_TARGET_FAILURE[strategy];
      if (labels.includes(target)) stats.triggered += 1;
      const others = labels.filter((l) => l !== target);
      if (others.length > 0) stats.collateralTurns += 1;
      for (const label of others) stats.collateral[label] += 1;
    }
  }
  for (const strategy of usedStrategies) tally.strategies[strategy].conversationsUsing += 1;
  for (const label of distinct) tally.labelConversations[label] += 1;
  tally.uniqueSum += distinct.size;
  return distinct;
}

function perConversationRow(result: ConversationResult, combined: CombinedVerdict, distinct: Set<FailureLabel>): PerConversation {
  return {
    key: result.spec.key,
    seedId: result.spec.seed.id,
    persona: result.spec.persona,
    mode: result.spec.mode,
    status: result.status,
    outcome: combined.outcome,
    score: combined.score,
    decidedBy: combined.judge,
    scorePass: combined.scorePass,
    gate: combined.gate,
    failedBy: combined.failedBy,
    findings: combined.findings,
    undecidedTurns: combined.undecidedTurns,
    turns: result.turns.length,
    uniqueFailureTypes: distinct.size,
    labels: FAILURE_LABELS.filter((l) => distinct.has(l)),
  };
}

/** Turns the totals into the summary's rates, means and shares. */
function summaryOfTally(tally: RunTally, run: RunInfo | undefined, options: { safety?: SafetyPolicy }): RunSummary {
  const { labelCounts, labelConversations, strategies, dimensionSums, gate, scoreOnly, passed, failed, turns, perConversation } = tally;
  const total = perConversation.length;
  const failures = FAILURE_LABELS.reduce((sum, l) => sum + labelCounts[l], 0);
  return {
    schemaVersion: 1,
    ...(run ? { run } : {}),
    conversations: total,
    passed,
    failed,
    inconclusive: tally.inconclusive,
    errors: tally.errors,
    failRate: ratio(failed, passed + failed),
    conversationsWithFindings: tally.withFindings,
    findingsRate: ratio(tally.withFindings, tally.completed),
    gate: {
      failOn: FAILURE_LABELS.filter((l) => tally.failOn.has(l)),
      ...gate,
      scoreOnly: { ...scoreOnly, failRate: ratio(scoreOnly.failed, scoreOnly.passed + scoreOnly.failed) },
    },
    meanScore: ratio(tally.scoreSum, tally.scored),
    uniqueFailureTypesPerConversation: ratio(tally.uniqueSum, total) ?? 0,
    failures,
    failureTypes: Object.fromEntries(
      FAILURE_LABELS.map((l) => [
        l,
        { count: labelCounts[l], share: ratio(labelCounts[l], failures) ?? 0, conversations: labelConversations[l], prevalence: ratio(labelConversations[l], total) ?? 0 },
      ]),
    ) as RunSummary['failureTypes'],
    strategies: Object.fromEntries(
      STRATEGIES.map((s) => {
        const st = strategies[s];
        return [s, { ...st, targetTriggered: ratio(st.triggered, st.uses), collateralRate: ratio(st.collateralTurns, st.uses) }];
      }),
    ) as RunSummary['strategies'],
    failurePositions: { relative: tally.relative, absolute: tally.absolute },
    judgeTiers: { conversation: tally.conversationTiers, turn: tally.turnTiers, decidedBy: tally.decidedBy, judges: tally.judges },
    turns,
    meanTurns: ratio(turns, total) ?? 0,
    dimensions: Object.fromEntries(DIMENSIONS.map((d) => [d, { mean: ratio(dimensionSums[d].sum, dimensionSums[d].n), n: dimensionSums[d].n }])) as RunSummary['dimensions'],
    perConversation,
    coverage: tally.coverage.finish(),
    ...(options.safety ? { safety: safetySummary(options.safety) } : {}),
    ...dialogueReliability(perConversation),
  };
}

/**
 * Computes the RunSummary in one pass over the conversations (any iterable, e.g. the store's
 * stream). Labels count from each turn's deciding verdict (src/judge/precedence.ts) and outcomes from
 * combinedVerdict (precedence and the critical-failure gate), so a failure seen by two judges is counted once.
 */
export function computeRunSummary(conversations: Iterable<ConversationResult>, run?: RunInfo, options: { safety?: SafetyPolicy } = {}): RunSummary {
  const summary = runSummaryTally();
  for (const result of conversations) summary.add(result, combinedVerdict(result));
  return summary.finish(run, options);
}

/** computeRunSummary fed one conversation at a time, with the combined verdict the caller's pass computed once for every collector. */
export function runSummaryTally() {
  const tally = emptyRunTally();
  return {
    add(result: ConversationResult, combined: CombinedVerdict): void {
      tally.coverage.add(result);
      tallyConversationVerdict(tally, result, combined);
      const distinct = tallyTurns(tally, result);
      tally.perConversation.push(perConversationRow(result, combined, distinct));
    },
    finish: (run?: RunInfo, options: { safety?: SafetyPolicy } = {}): RunSummary => summaryOfTally(tally, run, options),
  };
}

const isRecord = (value: unknown): value is Record<string, any> => typeof value === 'object' && value !== null && !Array.isArray(value);

/**
 * Fills what a summary.json written by an earlier version lacks, so older runs still compare:
 * - before the critical-failure gate and judge references (no `gate`): judged by C alone with one judge
 *   per tier, so its gate is `failOn: []`, its score-only verdict is its verdict, its judges its tiers;
 * - before findings were a figure (no `conversationsWithFindings`): counted from `perConversation`
 *   (completed conversations with labels); their per-conversation findings were not kept (empty);
 * - before a label joined the taxonomy: that label counted zero times.
 */
export function withPreGateFields(json: unknown): unknown {
  return withLaterLabels(withFindingsFields(withGateFields(json)));
}

/** A label added to the taxonomy later (prompt_injection) did not occur in a run summarised before it: zero counts. */
function withLaterLabels(json: unknown): unknown {
  if (!isRecord(json) || !isRecord(json.failureTypes) || FAILURE_LABELS.every((l) => l in json.failureTypes)) return json;
  const zeros = (counts: unknown, zero: () => unknown) => (isRecord(counts) ? Object.fromEntries(FAILURE_LABELS.map((l) => [l, counts[l] ?? zero()])) : counts);
  const strategies = isRecord(json.strategies)
    ? Object.fromEntries(Object.entries(json.strategies).map(([s, stats]) => [s, isRecord(stats) ? { ...stats, collateral: zeros(stats.collateral, () => 0) } : stats]))
    : json.strategies;
  return { ...json, failureTypes: zeros(json.failureTypes, () => ({ count: 0, share: 0, conversations: 0, prevalence: 0 })), strategies };
}

function withGateFields(json: unknown): unknown {
  if (!isRecord(json) || 'gate' in json || !Array.isArray(json.perConversation) || !isRecord(json.judgeTiers)) return json;
  const tiers = json.judgeTiers;
  const judges = Object.fromEntries(
    TIERS.filter((t) => isRecord(tiers.conversation?.[t]) && isRecord(tiers.turn?.[t]))
      .filter((t) => Object.values({ ...tiers.conversation[t], ...tiers.turn[t] }).some((n) => n !== 0))
      .map((t) => [t, { tier: t, conversation: tiers.conversation[t], turn: tiers.turn[t], decided: tiers.decidedBy?.[t] ?? 0 }]),
  );
  return {
    ...json,
    gate: { failOn: [], failedByGate: 0, failedOnlyByGate: 0, scoreOnly: { passed: json.passed, failed: json.failed, inconclusive: json.inconclusive, failRate: json.failRate } },
    judgeTiers: { ...tiers, judges },
    perConversation: json.perConversation.map((row) =>
      isRecord(row) ? { scorePass: row.outcome === 'pass' ? true : row.outcome === 'fail' ? false : null, gate: [], failedBy: row.outcome === 'fail' ? ['score'] : [], ...row } : row,
    ),
  };
}

function withFindingsFields(json: unknown): unknown {
  if (!isRecord(json) || 'conversationsWithFindings' in json || !Array.isArray(json.perConversation)) return json;
  const completed = json.perConversation.filter((row) => isRecord(row) && row.status === 'completed');
  const withFindings = completed.filter((row) => Array.isArray(row.labels) && row.labels.length > 0).length;
  return { ...json, conversationsWithFindings: withFindings, findingsRate: ratio(withFindings, completed.length) };
}
