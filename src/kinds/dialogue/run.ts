import type { ContextVector } from '../../domain/context.ts';
import type { ConversationResult, ConversationSpec } from '../../domain/conversation.ts';
import type { ArtifactInput } from '../../store/store.ts';
import type { CampaignEvent } from '../../run/events.ts';
import type { KindRig } from '../../run/kind.ts';
import type { Rig, RunRecorder } from './rig.ts';
import type { RecordedFact, RunFactSink } from '../../run/run-facts.ts';
import { pipelinesTurns, type ConversationsConfig, type LoadedConversations } from './config.ts';
import { runConversation } from './conversation.ts';
import { textOnlyNoticeFor } from './text-only.ts';

/** A finished conversation as the store takes it: the result, its artifacts (voice recordings) and, from a fleet worker, the run facts it produced. */
export interface FinishedConversation {
  result: ConversationResult;
  artifacts: ArtifactInput[];
  /** written with the conversation in one transaction (a local run's recorder writes them as the conversation ends) */
  facts?: RecordedFact[];
}

/**
 * Runs one planned conversation on a rig: the session with its head unit (spoken through the
 * bench's voice when the config asks for it), the drive scenario's frames, the tiers. The one
 * place a conversation is driven: `icabench run` and every fleet worker call it.
 */
export async function runPlannedConversation(
  rig: Rig,
  config: ConversationsConfig,
  runId: string,
  spec: ConversationSpec,
  options: { signal?: AbortSignal; emit?: (event: CampaignEvent) => void; recorder?: RunRecorder; contextAt?: (turnIndex: number) => ContextVector } = {},
): Promise<FinishedConversation> {
  const { vehicle, headUnit, voice, tiers } = rig;
  const drive = vehicle?.drive(spec);
  const emit = options.emit;
  let result: ConversationResult;
  // what the unit announced in its hello; read once it is connected
  let structured = true;
  try {
    result = await runConversation({
      spec,
      openSession: async (context) => {
        await headUnit.ensureReady();
        structured = headUnit.connection.capabilities().structuredActions;
        const session = await headUnit.connection.openSession(`${runId}/${spec.key}`, context);
        return voice ? voice.speaking(session, spec) : session;
      },
      simulator: tiers.simulator,
      judges: tiers.judges,
      structuredReplies: () => structured,
      failOn: config.scoring.failOn,
      inconclusive: config.scoring.inconclusive,
      // the paper's baseline runs without evaluator feedback (Negi et al., "Baseline")
      evaluatorFeedback: !(config.method === 'paper' && config.mode === 'baseline'),
      pipeline: pipelinesTurns(config),
      contextAt: drive?.contextAt ?? options.contextAt,
      beforeTurn: drive ? (session, turn) => drive.beforeTurn(headUnit.connection, session.sessionId, turn) : undefined,
      observeTurn: vehicle?.observation ? () => vehicle.observation!.watchTurn() : undefined,
      signal: options.signal,
      onTurn: emit ? (turn, active) => emit({ type: 'turn', runId, key: spec.key, turn, activeStrategies: [...active] }) : undefined,
    });
  } catch (error) {
    voice?.discard(spec.key);
    throw error;
  } finally {
    // an abandoned conversation's frames and model calls happened too: they are recorded either way
    options.recorder?.conversationEnded(spec.key, drive);
  }
  return voice ? voice.finish(result) : { result, artifacts: [] };
}

/**
 * The dialogue kind's rig as the run skeleton runs it (src/run/envelope.ts makes it the run's ItemRunner): the config's
 * concurrency on one rig. The frames a conversation's drive sent come back with it, stored in its transaction.
 * `contextAt` sets each turn's context (a live session: what the technician set; a drive scenario still wins).
 */
export function conversationRig(rig: Rig, campaign: LoadedConversations, log: (line: string) => void, contextAt?: (turnIndex: number) => ContextVector): KindRig<ConversationSpec, FinishedConversation> {
  const { config } = campaign;
  let recorder: RunRecorder | null = null;
  /** each ended conversation's facts, until it is handed back */
  const ended = new Map<string, RecordedFact[]>();
  let sink: RunFactSink | null = null;
  const take = (key: string) => {
    const facts = ended.get(key) ?? [];
    ended.delete(key);
    return facts;
  };
  return {
    concurrency: config.concurrency,
    meta: { simulator: rig.tiers.simulator.describe, judges: rig.tiers.judges.map((j) => j.ref) },
    envelope: rig.envelope,
    record(facts, runId, emit) {
      sink = facts;
      // what the recorder writes as a conversation ends (synchronously) is that conversation's: taken aside at once
      let capturing: RecordedFact[] | null = null;
      const inner = rig.record({ addRunFact: (id, kind, data) => (capturing ? void capturing.push({ kind, data } as RecordedFact) : facts.addRunFact(id, kind, data)) }, runId);
      recorder = {
        conversationEnded(key, drive) {
          capturing = [];
          try {
            inner.conversationEnded(key, drive);
          } finally {
            ended.set(key, capturing);
            capturing = null;
          }
        },
      };
      // the unit is connected (its hello known): a text-only unit without a model judge is told so before the first conversation
      const textOnly = textOnlyNoticeFor(rig, campaign);
      if (textOnly) {
        log(`note: ${textOnly}`);
        emit({ type: 'headunit', runId, kind: 'text_only', message: textOnly });
      }
    },
    // an abandoned conversation rejects with ConversationAborted, an ItemAborted: run again on resume
    async run(runId, { key, item: spec }, signal, emit) {
      let finished: FinishedConversation;
      try {
        finished = await runPlannedConversation(rig, campaign.config, runId, spec, { signal, emit, recorder: recorder ?? undefined, contextAt });
      } catch (error) {
        // an abandoned conversation's frames happened too: recorded with the run
        for (const fact of take(key)) sink?.addRunFact(runId, fact.kind, fact.data);
        throw error;
      }
      return { ...finished, facts: [...(finished.facts ?? []), ...take(key)] };
    },
    // a device of the bench's acoustic link that fails ends the run (resumable) instead of failing every conversation after it
    fault: () => rig.voice?.deviceFault() ?? null,
    close: () => rig.close(),
  };
}
