import type { HeadUnitHandler, HeadUnitReplyBody } from '../headunit/types.ts';
import type { ContextVector } from '../domain/context.ts';
import { UtteranceCollector, nowMs, streamUtterance, type AudioLink } from './audio-link.ts';
import { EspeakTts } from './espeak.ts';
import { formatRecognizedText, surfaceSpellings } from './formatting.ts';
import { PocketsphinxStt } from './pocketsphinx.ts';
import type { SttEngine, TtsEngine, VoiceParams } from './types.ts';
import { driverVocabulary } from './vocabulary.ts';

/** The reference head unit's own voice (distinct from every driver persona). */
export const ASSISTANT_VOICE: VoiceParams = { voice: 'en-us+klatt2', rateWpm: 165, pitch: 70, amplitude: 100 };

/**
 * A bridge user_turn whose text is this (empty) string is a spoken turn: the words are in the
 * audio utterance with the same session and turn, sent just before it.
 */
export const SPOKEN_TURN_TEXT = '';

export interface HeadUnitVoiceOptions {
  link: AudioLink;
  /** recogniser for the driver's audio; default pocketsphinx with a domain model of `vocabulary` */
  stt?: SttEngine;
  /** sentences the default recogniser expects; default driverVocabulary() (pass driverVocabulary(seeds) for a campaign) */
  vocabulary?: readonly string[];
  tts?: TtsEngine;
  voice?: VoiceParams;
  /** stream reply audio at real time (a loudspeaker); false sends it as fast as possible */
  realtime?: boolean;
  /** how long to wait for the driver's end-of-utterance after the user_turn arrived */
  utteranceTimeoutMs?: number;
  /** reports reply-audio failures, which happen after the text reply has been returned */
  onError?: (error: Error) => void;
}

/** The head unit's voice front end: recognises the driver's audio, speaks replies back over the link. */
export class HeadUnitVoiceFrontEnd {
  private readonly collector: UtteranceCollector;
  private readonly stt: SttEngine;
  private readonly tts: TtsEngine;
  private readonly spellings: Map<string, string[]>;

  constructor(private readonly options: HeadUnitVoiceOptions) {
    this.collector = new UtteranceCollector(options.link, 'to_unit');
    const vocabulary = options.vocabulary ?? driverVocabulary();
    this.stt = options.stt ?? new PocketsphinxStt({ vocabulary });
    this.spellings = surfaceSpellings(vocabulary);
    this.tts = options.tts ?? new EspeakTts();
  }

  /** What the driver said in this turn, as the unit's recogniser hears it, formatted as text (see formatting.ts). */
  async recognizeTurn(sessionId: string, turn: number): Promise<string> {
    this.options.link.expect?.(sessionId, turn);
    const utterance = await this.collector.take(sessionId, turn, this.options.utteranceTimeoutMs ?? 10_000);
    if (utterance.pcm.samples.length === 0) return '';
    const heard = await this.stt.transcribe(utterance.pcm, { source: `session ${sessionId} turn ${turn} driver audio` });
    // the unit's understanding reads typed text: punctuation, proper spellings, digits
    return formatRecognizedText(heard, this.spellings);
  }

  /** Synthesizes the reply and streams it to the bench; resolves when the last chunk is sent. */
  async speak(sessionId: string, turn: number, text: string): Promise<void> {
    // with nothing to say (or no voice) the bench still gets its end-of-utterance instead of waiting out a timeout
    const silence = () =>
      this.options.link.endOfUtterance({ sessionId, turn, direction: 'to_bench', chunks: 0, durationMs: 0, sentAt: nowMs(), reason: 'completed' });
    if (!text.trim()) return silence();
    try {
      const pcm = await this.tts.synthesize(text, this.options.voice ?? ASSISTANT_VOICE);
      await streamUtterance(this.options.link, pcm, { sessionId, turn, direction: 'to_bench', realtime: this.options.realtime ?? false });
    } catch (error) {
      silence();
      throw error;
    }
  }

  /** speak() without waiting; failures go to options.onError (the text reply has already been returned) */
  speakInBackground(sessionId: string, turn: number, text: string): void {
    this.speak(sessionId, turn, text).catch((error: Error) => this.options.onError?.(error));
  }

  async close(): Promise<void> {
    this.collector.close();
    await this.stt.dispose?.();
    await this.options.link.close?.();
  }
}

/**
 * Gives a text head unit ears and a mouth: spoken turns (text === SPOKEN_TURN_TEXT) are recognised
 * from the audio, handled as text, answered with recognizedText set, and the reply is spoken.
 * Text turns pass through unchanged.
 */
export function withVoiceFrontEnd(handler: HeadUnitHandler, voice: HeadUnitVoiceFrontEnd): HeadUnitHandler {
  return {
    unit: handler.unit,
    capabilities: { ...handler.capabilities, audio: true },
    startSession: (sessionId, context) => handler.startSession(sessionId, context),
    endSession: (sessionId) => handler.endSession(sessionId),
    handleVehicleContext: handler.handleVehicleContext?.bind(handler),
    async handleTurn(sessionId: string, turn: number, text: string, context: ContextVector | undefined): Promise<HeadUnitReplyBody> {
      if (text !== SPOKEN_TURN_TEXT) return handler.handleTurn(sessionId, turn, text, context);
      const recognizedText = await voice.recognizeTurn(sessionId, turn);
      const reply = await handler.handleTurn(sessionId, turn, recognizedText, context);
      // the reply is spoken while the text reply travels back; the bench times the audio itself
      voice.speakInBackground(sessionId, turn, reply.text);
      return { ...reply, recognizedText };
    },
  };
}
