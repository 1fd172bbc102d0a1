import { z } from 'zod';
import { BusObservationSchema } from './bus-observation.ts';
import { ContextVectorSchema } from './context.ts';
import { ConstraintSchema, ExpectedOutcomeSchema, RequestSchema, TargetSchema, TargetStatusSchema } from './targets.ts';
import { DimensionSchema, FailureLabelSchema, JudgeTierSchema, PersonaSchema, StrategySchema } from './taxonomy.ts';
import { AssistantReplySchema } from '../../packages/bridge-sdk/src/protocol/bridge.ts';
import { ExpectationResultSchema, TurnExpectationSchema } from './expectations.ts';

/** A seed phrase s with its annotated targets (what the simulator will ask for). */
export const SeedPhraseSchema = z.strictObject({
  id: z.string().min(1),
  text: z.string().min(1),
  city: z.enum(['Munich', 'Berlin']).optional(),
  requests: z.array(RequestSchema).min(1),
});
export type SeedPhrase = z.infer<typeof SeedPhraseSchema>;

export const SafetyProbeKindSchema = z.enum(['video_while_driving', 'long_text_while_driving', 'disable_assistance', 'unsafe_speed']);
export type SafetyProbeKind = z.infer<typeof SafetyProbeKindSchema>;

/**
 * What the simulator meant by an utterance, in structured form. The oracle judge works from this;
 * the LLM simulator must return it alongside its text.
 */
export const UtteranceAnnotationSchema = z.object({
  /** targets this utterance asks for (new or again) */
  addresses: z.array(z.string()).default([]),
  /** targets that appear only now (e.g. the multi-stop plan of a Planning Challenge) */
  introduces: z.array(z.object({ id: z.string(), request: RequestSchema })).default([]),
  /** constraints added in this utterance, per target id (constraint stacking) */
  addedConstraints: z.record(z.string(), z.array(ConstraintSchema)).default({}),
  /** per target id: no place of the world meets what the user has now asked for (set by a simulator that knows the world) */
  expectations: z.record(z.string(), ExpectedOutcomeSchema).optional(),
  /** the user returns to these targets after a topic switch without repeating their constraints */
  returnsTo: z.array(z.string()).default([]),
  /** targets the user explicitly drops ("never mind") */
  drops: z.array(z.string()).default([]),
  /** a request outside the targets (topic switch, distraction); its domain */
  sideRequest: RequestSchema.optional(),
  safetyProbe: SafetyProbeKindSchema.optional(),
  /** material ambiguity: a name that fits several places */
  ambiguity: z.object({ term: z.string(), candidates: z.array(z.string()).min(2) }).optional(),
  /** closing turn: nothing is asked */
  closing: z.boolean().default(false),
});
export type UtteranceAnnotation = z.infer<typeof UtteranceAnnotationSchema>;

export const SimulatedUtteranceSchema = z.object({
  text: z.string().min(1),
  strategy: StrategySchema.nullable(),
  annotation: UtteranceAnnotationSchema,
  /** scripted turns (suites, live sessions): what the reply must do besides passing the judges */
  expect: TurnExpectationSchema.optional(),
  /**
   * `read`: the annotation was read from the words by the rule reader (src/simulator/reader.ts), which leaves out
   * what it does not recognise, so an empty one does not mean nothing was asked. Absent: stated by whoever
   * wrote the turn (a simulator's own annotation, a suite's `means:`).
   */
  meaning: z.literal('read').optional(),
  /** scripted turns: what a recorded assistant answered here (imports, pins); the judges compare the reply with it (src/judge/reference.ts) */
  reference: z.string().optional(),
});
export type SimulatedUtterance = z.infer<typeof SimulatedUtteranceSchema>;

export const TurnLabelSchema = z.object({
  label: FailureLabelSchema,
  targetId: z.string().nullable().default(null),
  evidence: z.string(),
  tier: JudgeTierSchema,
});
export type TurnLabel = z.infer<typeof TurnLabelSchema>;

export const VerdictOutcomeSchema = z.enum(['judged', 'inconclusive', 'judge_error']);
export type VerdictOutcome = z.infer<typeof VerdictOutcomeSchema>;

/** The reference of the judge that produced a verdict, as the judge reports it (Judge.ref). */
const JudgeRefSchema = z.string().min(1);

/**
 * Verdicts stored before verdicts named their judge carry only the tier: their judge defaults to the
 * tier's name ("oracle", or "llm" for a model judge whose reference was not recorded).
 */
function withJudgeFromTier(value: unknown): unknown {
  if (value && typeof value === 'object' && !('judge' in value) && 'tier' in value) return { ...value, judge: (value as { tier: unknown }).tier };
  return value;
}

/** What a turn verdict rests on (src/judge/grounds.ts); a verdict without grounds is inconclusive. */
export const TurnGroundSchema = z.enum(['targets', 'safety_probe', 'expectation', 'nothing_asked', 'fallback', 'manipulation', 'reference']);
export type TurnGround = z.infer<typeof TurnGroundSchema>;

export const TurnVerdictSchema = z.preprocess(
  withJudgeFromTier,
  z.object({
    tier: JudgeTierSchema,
    judge: JudgeRefSchema,
    outcome: VerdictOutcomeSchema,
    labels: z.array(TurnLabelSchema),
    targetUpdates: z.array(z.object({ targetId: z.string(), status: TargetStatusSchema })).default([]),
    /** targets the judge could neither complete nor fail on this turn, and why (e.g. a "not found" no world can check): T leaves them out */
    undecidedTargets: z.array(z.object({ targetId: z.string(), why: z.string() })).optional(),
    reasoning: z.string().default(''),
    /** the oracle's judged verdicts: what the verdict rests on (absent on model judges' verdicts and older records) */
    grounds: z.array(TurnGroundSchema).optional(),
  }),
);
export type TurnVerdict = z.infer<typeof TurnVerdictSchema>;

export const DimensionScoreSchema = z.object({
  score: z.union([z.literal(0), z.literal(1), z.literal(2)]),
  reasoning: z.string().default(''),
});

export const ConversationVerdictSchema = z.preprocess(
  withJudgeFromTier,
  z.object({
    tier: JudgeTierSchema,
    judge: JudgeRefSchema,
    outcome: VerdictOutcomeSchema,
    dimensions: z.partialRecord(DimensionSchema, DimensionScoreSchema),
    /** T: share of targets completed */
    completedShare: z.number().min(0).max(1),
    /** C of the paper */
    score: z.number().min(0).max(1).nullable(),
    pass: z.boolean().nullable(),
    reasoning: z.string().default(''),
  }),
);
export type ConversationVerdict = z.infer<typeof ConversationVerdictSchema>;

/** The spoken path of one turn in a voice campaign (see docs/voice.md). */
export const VoiceTurnSchema = z.object({
  utteranceText: z.string(),
  /** what the head unit says it recognised; null when it does not report it */
  recognizedText: z.string().nullable(),
  replyText: z.string().nullable(),
  /** the bench's transcription of the reply audio; null when no reply audio came */
  replyTranscript: z.string().nullable(),
  /** from the end of the driver's speech to the first reply audio chunk, on the bench's clock */
  firstReplyLatencyMs: z.number().min(0).nullable(),
  replyDurationMs: z.number().min(0).nullable(),
  /** reply audio arrived while the driver was still speaking */
  bargeIn: z.boolean(),
  /** SNR of the driver audio in dB; null for clean speech */
  snrDb: z.number().nullable(),
  /** the voice path failed this turn: the head unit misheard at least one word, or no reply audio came */
  failed: z.boolean(),
  /** 'tts:<engine>' or 'library:<utterance id>' */
  driverAudioSource: z.string(),
  headUnitAsrWer: z.number().min(0).nullable(),
  replyTranscriptionWer: z.number().min(0).nullable(),
  /** a voice-path problem that did not stop the turn (e.g. the reply audio never came) */
  voiceError: z.string().nullable(),
});
export type VoiceTurn = z.infer<typeof VoiceTurnSchema>;

export const TurnRecordSchema = z.object({
  index: z.number().int().min(0),
  utterance: SimulatedUtteranceSchema,
  context: ContextVectorSchema,
  reply: AssistantReplySchema.nullable(),
  /** ms from sending the user turn to receiving the full reply */
  latencyMs: z.number().min(0),
  /** one verdict per judge, in precedence order (the order of `judges:`; see src/judge/precedence.ts) */
  verdicts: z.array(TurnVerdictSchema),
  targetsAfter: z.array(TargetSchema),
  /** voice campaigns: how the spoken turn went */
  voice: VoiceTurnSchema.optional(),
  /** scripted turns with expectations: each check and whether it held (src/judge/expectations.ts) */
  expectations: ExpectationResultSchema.optional(),
  /** what the unit was seen doing on the CAN bus during the turn, with the frames (vehicle.observe, docs/bus-observation.md) */
  observed: BusObservationSchema.optional(),
});
export type TurnRecord = z.infer<typeof TurnRecordSchema>;

/**
 * The number a person reads for a turn (`index`, a target's introducedTurn/completedTurn are counted from 0 in
 * the stored record): the first turn is turn 1, as the report, the findings, the app and the session screen show.
 */
export function turnNumber(index: number): number {
  return index + 1;
}

/**
 * What a conversation with an undecided turn is: `review` = outcome inconclusive (needs review; JUnit
 * fails it), `pass` = its C decides as if the turn were fine.
 */
export const InconclusivePolicySchema = z.enum(['review', 'pass']);
export type InconclusivePolicy = z.infer<typeof InconclusivePolicySchema>;

export const ConversationStatusSchema = z.enum(['completed', 'sut_error', 'simulator_error', 'judge_error']);
export type ConversationStatus = z.infer<typeof ConversationStatusSchema>;

export const ConversationModeSchema = z.enum(['guided', 'baseline']);
export type ConversationMode = z.infer<typeof ConversationModeSchema>;

/**
 * One turn of a scripted conversation (a suite case, src/suite/format.ts): the driver's words, the full
 * context at that turn, what the words mean (absent: the bench reads them, src/simulator/reader.ts) and
 * what the reply must do.
 */
export const ScriptedTurnSchema = z.object({
  text: z.string().min(1),
  context: ContextVectorSchema,
  annotation: UtteranceAnnotationSchema.optional(),
  expect: TurnExpectationSchema.optional(),
  /** what a recorded assistant answered here: evidence the judges compare the reply with */
  reference: z.string().optional(),
});
export type ScriptedTurn = z.infer<typeof ScriptedTurnSchema>;

/** Everything that fixes one conversation before it runs; its key is stable across resumes. */
export const ConversationSpecSchema = z.object({
  key: z.string(),
  /** a scripted conversation may have no targets up front (its turns introduce them, or it has none) */
  seed: SeedPhraseSchema.extend({ requests: z.array(RequestSchema) }),
  persona: PersonaSchema,
  mode: ConversationModeSchema,
  strategies: z.array(StrategySchema),
  maxTurns: z.number().int().min(1).max(50),
  context: ContextVectorSchema,
  repeat: z.number().int().min(0),
  rngSeed: z.number().int(),
  scenario: z.string().optional(),
  /** vehicle campaigns whose `vehicle.startS` is a range: the scenario second of this conversation's turn 0 */
  vehicleStartS: z.number().min(0).optional(),
  /** voice campaigns: the cabin-noise level the driver's audio is mixed at, in dB SNR; null = clean */
  snrDb: z.number().nullable().optional(),
  /** scripted conversations (suites, live sessions): the turns the scripted user plays, in order */
  script: z.array(ScriptedTurnSchema).optional(),
  /** scripted conversations: the target ids of seed.requests, in order (default t1, t2, …), as the script's meanings name them */
  targetIds: z.array(z.string()).optional(),
});
export type ConversationSpec = z.infer<typeof ConversationSpecSchema>;

/**
 * What the transport saw go wrong on the wire while this conversation's session was open (the
 * bridge records it; docs/bridge-protocol.md, "Protocol anomalies"). Late replies are not here: the
 * conversation stops at a timeout, so a late reply always comes after it and is a run fact.
 */
export const ProtocolAnomaliesSchema = z.object({
  /** replies (or session_ready) for a turn that had already been answered or failed */
  duplicateReplies: z.number().int().min(0),
  /** replies naming a turn the bench had not asked */
  wrongTurnReplies: z.number().int().min(0),
  /** messages for this conversation that failed their schema, a structural limit or the size limit */
  invalidMessages: z.number().int().min(0),
  /** the unit's link dropped while the conversation ran: it disconnected, or another connection took over its name */
  linkLost: z.enum(['disconnected', 'replaced']).nullable(),
});
export type ProtocolAnomalies = z.infer<typeof ProtocolAnomaliesSchema>;

export const ConversationResultSchema = z.object({
  spec: ConversationSpecSchema,
  status: ConversationStatusSchema,
  error: z.string().nullable(),
  turns: z.array(TurnRecordSchema),
  targets: z.array(TargetSchema),
  /** one verdict per judge, in precedence order */
  verdicts: z.array(ConversationVerdictSchema),
  /**
   * the critical-failure gate this conversation was judged by (scoring.failOn): any of these labels
   * among the deciding turn verdicts fails it whatever its C. Absent in conversations stored before
   * the gate existed, which were judged by C alone.
   */
  failOn: z.array(FailureLabelSchema).optional(),
  /**
   * what an undecided turn (no judge decided it) made of this conversation (scoring.inconclusive):
   * `review` = never pass, outcome inconclusive. Absent in conversations stored before the rule,
   * which C decided as `pass` does.
   */
  inconclusive: InconclusivePolicySchema.optional(),
  startedAt: z.string(),
  durationMs: z.number().min(0),
  /** protocol anomalies of the session (transports that observe them: the bridge) */
  protocol: ProtocolAnomaliesSchema.optional(),
});
export type ConversationResult = z.infer<typeof ConversationResultSchema>;
