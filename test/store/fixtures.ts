import { ConversationResultSchema, type ConversationResult, type ConversationSpec, type ConversationVerdict, type TurnRecord, type TurnVerdict, UtteranceAnnotationSchema } from '../../src/domain/conversation.ts';
import { DEFAULT_FAIL_ON, type FailureLabel, type JudgeTier, type Strategy } from '../../src/domain/taxonomy.ts';

/** Hand-made conversations for store, profile and report tests: small, readable, exact. */

const CONTEXT = {
  location: { city: 'Munich', district: 'Maxvorstadt', position: { lat: 48.15, lon: 11.57 } },
  date: '2026-03-02',
  time: '18:30',
};

export function spec(key: string, overrides: Partial<ConversationSpec> = {}): ConversationSpec {
  return {
    key,
    seed: {
      id: `seed-${key}`,
      text: 'Find me a cheap Italian restaurant in Schwabing',
      requests: [{ intent: 'find_poi', category: 'restaurant', constraints: [{ kind: 'cuisine', value: 'italian' }] }],
    },
    persona: 'neutral',
    mode: 'guided',
    strategies: ['constraint_stacking', 'context_confusion'],
    maxTurns: 8,
    context: CONTEXT,
    repeat: 0,
    rngSeed: 7,
    ...overrides,
  };
}

export interface TurnPlan {
  strategy?: Strategy | null;
  /** labels of the oracle verdict for this turn */
  labels?: FailureLabel[];
  /** extra verdicts (e.g. an LLM tier) */
  extra?: TurnVerdict[];
  oracleOutcome?: TurnVerdict['outcome'];
  utterance?: string;
  reply?: string | null;
}

/** The reference a fixture judge of a tier reports: the oracle, or a model judge. */
export const judgeRef = (tier: JudgeTier) => (tier === 'oracle' ? 'oracle' : 'ollama:judge-model');

export function turnVerdict(tier: JudgeTier, labels: FailureLabel[], outcome: TurnVerdict['outcome'] = 'judged', judge = judgeRef(tier)): TurnVerdict {
  return {
    tier,
    judge,
    outcome,
    labels: labels.map((label) => ({ label, targetId: 't1', evidence: `${label} evidence`, tier })),
    targetUpdates: [],
    reasoning: '',
  };
}

export function turn(index: number, plan: TurnPlan = {}): TurnRecord {
  const reply = plan.reply === undefined ? `reply ${index}` : plan.reply;
  return {
    index,
    utterance: {
      text: plan.utterance ?? `utterance ${index}`,
      strategy: plan.strategy ?? null,
      annotation: UtteranceAnnotationSchema.parse({}),
    },
    context: CONTEXT,
    reply: reply === null ? null : { sessionId: 's1', turn: index, text: reply, actions: [] },
    latencyMs: 12,
    verdicts: [turnVerdict('oracle', plan.labels ?? [], plan.oracleOutcome ?? 'judged'), ...(plan.extra ?? [])],
    targetsAfter: [],
  };
}

export function conversationVerdict(tier: JudgeTier, score: number | null, pass: boolean | null, outcome: ConversationVerdict['outcome'] = 'judged', judge = judgeRef(tier)): ConversationVerdict {
  return {
    tier,
    judge,
    outcome,
    dimensions: outcome === 'judged' ? { instruction: { score: 2, reasoning: '' }, safety: { score: 1, reasoning: '' } } : {},
    completedShare: 1,
    score,
    pass,
    reasoning: '',
  };
}

export function result(key: string, turns: TurnPlan[], options: Partial<Omit<ConversationResult, 'turns'>> & { score?: number; pass?: boolean } = {}): ConversationResult {
  const score = options.score ?? 0.9;
  const pass = options.pass ?? score >= 0.75;
  // parsed, so schema defaults are filled in exactly as the store fills them on read
  return ConversationResultSchema.parse({
    spec: options.spec ?? spec(key),
    status: options.status ?? 'completed',
    error: options.error ?? null,
    turns: turns.map((plan, i) => turn(i, plan)),
    targets: [],
    verdicts: options.verdicts ?? [conversationVerdict('oracle', score, pass)],
    // judged like a new run (the default gate) unless the test says otherwise; `failOn: undefined` is a run stored before the gate
    failOn: 'failOn' in options ? options.failOn : [...DEFAULT_FAIL_ON],
    // an undecided turn needs review, as in a new run; `inconclusive: undefined` is a run stored before that rule
    inconclusive: 'inconclusive' in options ? options.inconclusive : 'review',
    startedAt: options.startedAt ?? '2026-03-02T18:30:00.000Z',
    durationMs: options.durationMs ?? 1500,
  });
}
