import { dirname } from 'node:path';
import type { ConversationResult, ConversationSpec } from '../../domain/conversation.ts';
import type { ConnectedHeadUnit } from '../../run/connect.ts';
import type { HeadUnitSession } from '../../headunit/types.ts';
import type { ArtifactInput } from '../../store/store.ts';
import { speakingSession, type BenchVoice, type SpokenTurnResult } from '../../voice/bench-voice.ts';
import type { AudioLink } from '../../voice/audio-link.ts';
import { checkAcousticDevices, checkVoicePrerequisites, createBenchVoice, openBenchAcousticLink, turnAudioArtifacts, type VoiceConfig } from '../../voice/config.ts';
import { createSocketAudioLink } from '../../voice/socket-audio-link.ts';
import { VoiceError } from '../../voice/types.ts';
import { ConfigError, type LoadedConversations } from './config.ts';

/**
 * The spoken side of a voice campaign: each conversation's session speaks its turns (persona voice,
 * the conversation's SNR level), and when the conversation ends its turn records gain their `voice`
 * metrics and its audio becomes artifacts stored with it — so the summary, the report and a resumed
 * run all read them from the store.
 */
export class CampaignVoice {
  private readonly spoken = new Map<string, Map<number, SpokenTurnResult>>();

  private constructor(
    private readonly bench: BenchVoice,
    private readonly config: VoiceConfig,
    private readonly link: AudioLink,
  ) {}

  /**
   * The reference unit hears through the air exactly when the bench speaks through it: devices on one
   * side only would leave one end waiting for audio the other never sends.
   */
  static checkLink(config: LoadedConversations['config']): void {
    const acousticBench = config.voice?.enabled === true && config.voice.link.type === 'acoustic';
    const acousticUnit = config.headUnit.type === 'reference' && config.headUnit.acoustic !== undefined;
    if (acousticUnit && !acousticBench) throw new ConfigError('headUnit.acoustic: the reference unit listens on audio devices only with voice.link: { type: acoustic, … }; remove headUnit.acoustic or set the voice link');
    if (acousticBench && config.headUnit.type === 'reference' && !acousticUnit) throw new ConfigError('voice.link: acoustic with the reference head unit needs headUnit.acoustic: { input, output } (its microphone and loudspeaker devices)');
  }

  /**
   * The audio devices of an acoustic link (the bench's and the reference unit's) exist on an answering sound server:
   * checked before anything heavy starts, so a missing one ends the run within seconds, naming the device and the fix.
   */
  static async checkDevices(config: LoadedConversations['config']): Promise<void> {
    const link = config.voice?.enabled ? config.voice.link : null;
    const unit = config.headUnit.type === 'reference' ? config.headUnit.acoustic : undefined;
    await checkAcousticDevices(link?.type === 'acoustic' ? link : null, unit);
  }

  /** Throws, naming what to install, when a Debian package or a model file the campaign needs is missing. */
  static async checkPrerequisites(config: VoiceConfig): Promise<void> {
    const problems = await checkVoicePrerequisites(config);
    if (problems.length > 0) throw new VoiceError(`voice: the campaign cannot speak:\n- ${problems.join('\n- ')}`);
  }

  static async open(config: VoiceConfig, campaign: LoadedConversations, headUnit: ConnectedHeadUnit, log: (line: string) => void): Promise<CampaignVoice> {
    const worldSeed = campaign.config.headUnit.type === 'reference' ? campaign.config.headUnit.worldSeed : undefined;
    if (config.link.type === 'acoustic') {
      if (campaign.config.concurrency !== 1) throw new ConfigError(`voice.link: acoustic plays every utterance into one cabin, so conversations cannot overlap: set concurrency: 1 (it is ${campaign.config.concurrency})`);
      // through the air: the unit hears the loudspeaker and answers aloud; the bridge carries only the turns
      const link = await openBenchAcousticLink(config.link, log);
      try {
        return new CampaignVoice(await createBenchVoice(config, { link, seeds: campaign.seeds, worldSeed, baseDir: dirname(campaign.path) }), config, link);
      } catch (error) {
        await link.close();
        throw error;
      }
    }
    const audio = headUnit.audio;
    if (!audio) throw new ConfigError('voice: this head unit connection carries no audio; spoken turns need the reference head unit or a head unit on the bridge');
    if (!headUnit.connection.capabilities().audio) {
      throw new ConfigError(`voice: ${headUnit.connection.describe} does not announce capabilities.audio in its hello, so it cannot take spoken turns (docs/bridge-protocol.md, "Audio")`);
    }
    const link = createSocketAudioLink(audio, { onInvalid: (error) => log(`voice: dropped a malformed audio message from the head unit: ${error.message}`) });
    const bench = await createBenchVoice(config, { link, seeds: campaign.seeds, worldSeed, baseDir: dirname(campaign.path) });
    return new CampaignVoice(bench, config, link);
  }

  /** The conversation's session with spoken turns. */
  speaking(session: HeadUnitSession, spec: ConversationSpec): HeadUnitSession {
    const turns = new Map<number, SpokenTurnResult>();
    this.spoken.set(spec.key, turns);
    return speakingSession(session, this.bench, { persona: spec.persona, snrDb: spec.snrDb ?? null, onResult: (result, turn) => void turns.set(turn, result) });
  }

  /** Adds each spoken turn's metrics to the conversation's turn records and returns its audio artifacts. */
  finish(result: ConversationResult): { result: ConversationResult; artifacts: ArtifactInput[] } {
    const spoken = this.spoken.get(result.spec.key) ?? new Map<number, SpokenTurnResult>();
    this.spoken.delete(result.spec.key);
    const turns = result.turns.map((turn) => {
      const voice = spoken.get(turn.index);
      if (!voice) return turn;
      const { reply: _reply, driverAudio: _driver, replyAudio: _replyAudio, ...metrics } = voice;
      return { ...turn, voice: metrics };
    });
    const artifacts = this.config.saveAudio ? [...spoken].flatMap(([turn, voice]) => turnAudioArtifacts(voice, turn)) : [];
    return { result: { ...result, turns }, artifacts };
  }

  /** Why the bench cannot speak or listen any more (a device of its acoustic link failed: named with its config field and the fix), or null. */
  deviceFault(): string | null {
    return this.link.failed?.()?.message ?? null;
  }

  /** Forgets an abandoned conversation (it is run again on resume). */
  discard(key: string): void {
    this.spoken.delete(key);
  }

  async close(): Promise<void> {
    await this.bench.close();
    await this.link.close?.();
  }
}
