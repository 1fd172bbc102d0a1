import type { ContextVector } from '../domain/context.ts';
import type { VoiceTurn } from '../domain/conversation.ts';
import type { Persona } from '../domain/taxonomy.ts';
import type { AssistantReply } from '../protocol/bridge.ts';
import type { HeadUnitSession } from '../headunit/types.ts';
import { SimulatorError } from '../simulator/types.ts';
import { applyCabinAcoustics, type CabinAcoustics } from './acoustics.ts';
import { UtteranceCollector, streamUtterance, type AudioLink, type ReceivedUtterance } from './audio-link.ts';
import { voiceForPersona } from './espeak.ts';
import { SPOKEN_TURN_TEXT } from './headunit-voice.ts';
import type { UtteranceLibrary } from './library.ts';
import { wordErrorRate } from './metrics.ts';
import { durationMs, VoiceError, type Pcm16, type SttEngine, type TtsEngine, type VoiceActivityDetector } from './types.ts';
import { speechOnly } from './vad.ts';

/** The part of a HeadUnitSession a spoken turn needs (src/headunit/types.ts HeadUnitSession fits). */
export interface SpokenTurnSender {
  readonly sessionId: string;
  send(turn: number, text: string, context: ContextVector): Promise<AssistantReply>;
}

export interface BenchVoiceOptions {
  link: AudioLink;
  tts: TtsEngine;
  /** transcribes the head unit's spoken reply */
  replyStt: SttEngine;
  /** trims the reply audio to its speech before transcription; none = transcribe it whole */
  vad?: VoiceActivityDetector;
  acoustics: CabinAcoustics;
  /** stream the driver's audio at real time, as a microphone would */
  realtime: boolean;
  /** how long to wait for the reply audio's end-of-utterance after the text reply arrived */
  replyTimeoutMs: number;
  /** recorded utterances used instead of synthesis when their transcript matches the text */
  library?: UtteranceLibrary;
}

export interface SpokenTurnInput {
  session: SpokenTurnSender;
  turn: number;
  text: string;
  context: ContextVector;
  persona: Persona;
  /** SNR level for this turn (one of snrLevels(acoustics)); null = clean */
  snrDb: number | null;
}

export interface SpokenTurnResult extends VoiceTurn {
  reply: AssistantReply;
  replyText: string;
  /** what was played into the head unit (after cabin acoustics) */
  driverAudio: Pcm16;
  replyAudio: Pcm16 | null;
}

/**
 * The bench's side of one spoken turn: utterance text → persona voice (or a recording) → cabin
 * acoustics → 20 ms chunks to the head unit → spoken user_turn; then the reply audio is collected,
 * timed and transcribed. Timing: firstReplyLatencyMs is from the end of the driver's speech (the
 * end-of-utterance, sent when the last chunk has played) to the arrival of the first reply chunk.
 */
export class BenchVoice {
  private readonly replies: UtteranceCollector;

  constructor(private readonly options: BenchVoiceOptions) {
    this.replies = new UtteranceCollector(options.link, 'to_bench');
  }

  private async driverAudio(text: string, persona: Persona, snrDb: number | null): Promise<{ pcm: Pcm16; source: string }> {
    const recorded = this.options.library?.find(text);
    const clean = recorded ? recorded.pcm : await this.options.tts.synthesize(text, voiceForPersona(persona));
    const pcm = await applyCabinAcoustics(clean, this.options.acoustics, snrDb);
    return { pcm, source: recorded ? `library:${recorded.id}` : `tts:${this.options.tts.name}` };
  }

  /** Runs one spoken turn. SutErrors from the session propagate (the campaign records sut_error). */
  async runSpokenTurn(input: SpokenTurnInput): Promise<SpokenTurnResult> {
    const { session, turn } = input;
    // a device of the link that failed earlier (its recorder or player gone): the turn cannot be spoken or heard, so it ends here
    const failed = this.options.link.failed?.();
    if (failed) throw failed;
    let driver: { pcm: Pcm16; source: string };
    try {
      driver = await this.driverAudio(input.text, input.persona, input.snrDb);
    } catch (error) {
      // the bench's own failure (synthesis, noise bed), not the head unit's: the conversation ends as simulator_error
      throw new SimulatorError(`the simulated driver could not speak turn ${turn}: ${error instanceof Error ? error.message : String(error)}`, { cause: error });
    }
    let bargeIn = false;
    let speaking = true;
    const stopWatching = this.replies.onChunk((chunk) => {
      if (speaking && chunk.sessionId === session.sessionId && chunk.turn === turn) bargeIn = true;
    });
    let streamed;
    try {
      streamed = await streamUtterance(this.options.link, driver.pcm, { sessionId: session.sessionId, turn, direction: 'to_unit', realtime: this.options.realtime });
    } finally {
      speaking = false;
    }
    this.options.link.expect?.(session.sessionId, turn);
    const replyAudio = this.replies.take(session.sessionId, turn, this.options.replyTimeoutMs);
    replyAudio.catch(() => undefined); // awaited below, after the text reply
    let reply: AssistantReply;
    try {
      reply = await session.send(turn, SPOKEN_TURN_TEXT, input.context);
    } finally {
      stopWatching();
    }
    let received: ReceivedUtterance | null = null;
    let voiceError: string | null = null;
    let replyTranscript: string | null = null;
    try {
      received = await replyAudio;
      if (received.pcm.samples.length > 0) replyTranscript = await this.transcribeReply(received.pcm, `session ${session.sessionId} turn ${turn} reply audio`);
    } catch (error) {
      if (!(error instanceof VoiceError)) throw error;
      voiceError = error.message;
    }
    // a unit that only speaks (no text on the text channel) is judged on what the bench heard
    const typedReply = reply.text;
    if (!typedReply.trim() && replyTranscript) reply = { ...reply, text: replyTranscript };
    const recognizedText = reply.recognizedText ?? null;
    const headUnitAsrWer = recognizedText === null ? null : wordErrorRate(input.text, recognizedText);
    const noReplyAudio = received === null || received.pcm.samples.length === 0;
    const firstReplyLatencyMs = received?.firstChunkAt != null ? Math.max(0, received.firstChunkAt - streamed.endedAt) : null;
    return {
      utteranceText: input.text,
      recognizedText,
      replyText: reply.text,
      replyTranscript,
      firstReplyLatencyMs,
      replyDurationMs: received && received.pcm.samples.length > 0 ? durationMs(received.pcm) : null,
      bargeIn,
      snrDb: input.snrDb,
      failed: voiceError !== null || noReplyAudio || (headUnitAsrWer ?? 0) > 0,
      reply,
      driverAudio: driver.pcm,
      replyAudio: received?.pcm ?? null,
      driverAudioSource: driver.source,
      headUnitAsrWer,
      replyTranscriptionWer: replyTranscript === null || !typedReply.trim() ? null : wordErrorRate(typedReply, replyTranscript),
      voiceError,
    };
  }

  private async transcribeReply(pcm: Pcm16, source: string): Promise<string> {
    let audio = pcm;
    if (this.options.vad) {
      const segments = await this.options.vad.segments(pcm);
      if (segments.length === 0) return '';
      audio = speechOnly(pcm, segments);
    }
    return (await this.options.replyStt.transcribe(audio, { source })).text;
  }

  async close(): Promise<void> {
    this.replies.close();
    await Promise.all([this.options.replyStt.dispose?.(), this.options.vad?.dispose?.()]);
  }
}

/**
 * A HeadUnitSession whose turns are spoken: drop-in for the campaign's conversation loop (wrap the
 * session that openSession returns). Each result goes to `onResult` for the voice summary and audio files.
 */
export function speakingSession(
  session: HeadUnitSession,
  voice: BenchVoice,
  options: { persona: Persona; snrDb: number | null; onResult?: (result: SpokenTurnResult, turn: number) => void | Promise<void> },
): HeadUnitSession {
  return {
    sessionId: session.sessionId,
    close: () => session.close(),
    ...(session.anomalies ? { anomalies: () => session.anomalies!() } : {}),
    async send(turn, text, context) {
      const result = await voice.runSpokenTurn({ session, turn, text, context, persona: options.persona, snrDb: options.snrDb });
      await options.onResult?.(result, turn);
      return result.reply;
    },
  };
}
