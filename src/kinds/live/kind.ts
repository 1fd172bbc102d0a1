import type { ConversationSpec } from '../../domain/conversation.ts';
import { ConfigError } from '../../config/yaml.ts';
import type { CampaignKindDefinition } from '../../run/kind.ts';
import { conversationsPathFields, isModelRef } from '../dialogue/config.ts';
import { conversationStorage, dialogueKind, openConversationRig, type ConversationPlay } from '../dialogue/kind.ts';
import type { FinishedConversation } from '../dialogue/run.ts';
import { LIVE_KIND, LiveSessionConfigSchema, loadLiveSessionConfig, sessionStart, type LiveSessionConfig, type LoadedLiveSession } from './config.ts';

/** The technician's side of a session (./session.ts): who says the driver's turns, each turn's context, and how the session ends. */
export interface Technician extends Required<ConversationPlay> {
  /** no more turns: the conversation is judged as a whole and stored with the turns so far */
  end(): void;
}

/** The key of a session's one conversation. */
export const SESSION_KEY = 'session';
/** The most turns one live session takes (the conversation schema's limit). */
export const MAX_LIVE_TURNS = 50;

const NEEDS_TECHNICIAN = `kind ${LIVE_KIND}: a live session's turns are typed by a technician at this bench; start one with \`icabench session\` (--config FILE) or on the bench app's Live screen. It cannot be run from a campaign config, resumed or sent to a fleet`;
/** A live session never travels: its technician and the car's state they set are in this process. */
const benchOnly = (): never => {
  throw new ConfigError(`${NEEDS_TECHNICIAN} (a fleet worker has no technician)`);
};

/** The one conversation a session plays: the technician's turns from where the config starts, at most MAX_LIVE_TURNS. */
export function sessionSpec(config: LiveSessionConfig): ConversationSpec {
  return {
    key: SESSION_KEY,
    seed: { id: LIVE_KIND, text: config.name, requests: [] },
    persona: 'neutral',
    mode: 'baseline',
    strategies: [],
    maxTurns: MAX_LIVE_TURNS,
    context: sessionStart(config),
    repeat: 0,
    rngSeed: 0,
  };
}

/**
 * The live kind (docs/suites.md, "Live sessions"): a technician types turns to the connected unit and sets the car's state
 * as they go; every turn is judged as a campaign turn is. Its own config, plan (one conversation) and stored kind; the rig,
 * events and outputs are the dialogue kind's, by composition. With `technician` it runs a session (./session.ts); without
 * (the registry's entry: a stored live run's report, its config in the app's editor) it refuses to run.
 * Ctrl+C (the run's abort) ends the technician's session instead of abandoning it: the turns so far are judged and stored,
 * and the run ends interrupted.
 */
export function liveKind(technician?: Technician): CampaignKindDefinition<LoadedLiveSession, ConversationSpec, FinishedConversation, LiveSessionConfig> {
  return {
    name: LIVE_KIND,
    nouns: dialogueKind.nouns,
    configSchema: LiveSessionConfigSchema,
    load: loadLiveSessionConfig,
    modelRefs: (config) => config.judges.filter(isModelRef),
    pathFields: (config) => conversationsPathFields(config),
    plan: async (loaded) => [{ key: SESSION_KEY, item: sessionSpec(loaded.config) }],
    async open(loaded, options) {
      if (!technician) throw new ConfigError(NEEDS_TECHNICIAN);
      if (options.overrides?.simulator) throw new ConfigError('--simulator: a live session plays the technician\'s turns; it has no simulator to replace');
      const rig = await openConversationRig(loaded, options, technician);
      return {
        ...rig,
        run(runId, planned, signal, emit, ready) {
          signal.addEventListener('abort', () => technician.end(), { once: true });
          // the conversation itself is never abandoned: it ends when the technician's turns do
          return rig.run(runId, planned, new AbortController().signal, emit, ready);
        },
      };
    },
    storage: conversationStorage(LIVE_KIND, () => 'live'),
    startedEvent: dialogueKind.startedEvent,
    unitReach: dialogueKind.unitReach,
    finishedEvent: dialogueKind.finishedEvent,
    outputs: dialogueKind.outputs,
    view: dialogueKind.view,
    wire: { loaded: { encode: benchOnly, decode: benchOnly }, item: dialogueKind.wire.item, finished: dialogueKind.wire.finished, needs: benchOnly },
  };
}
