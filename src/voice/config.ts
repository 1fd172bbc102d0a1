import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { z } from 'zod';
import type { SeedPhrase } from '../domain/conversation.ts';
import { CabinAcousticsSchema } from './acoustics.ts';
import { checkAudioDevices, type WantedAudioDevice } from '../system/audio-devices.ts';
import { AcousticDevicesSchema, AcousticLink, type AcousticDevices, CaptureVadSchema, measureLoopbackLatency } from './acoustic-link.ts';
import type { AudioLink } from './audio-link.ts';
import { BenchVoice, type SpokenTurnResult } from './bench-voice.ts';
import { EspeakTts } from './espeak.ts';
import { loadUtteranceLibrary } from './library.ts';
import { POCKETSPHINX_ACOUSTIC_MODEL, PocketsphinxStt } from './pocketsphinx.ts';
import { ESPEAK_NG, POCKETSPHINX, missingProgramMessage } from '../system/programs.ts';
import { runProgram } from './system.ts';
import { VoiceError } from './types.ts';
import { SileroVad } from './vad.ts';
import { driverVocabulary, replyVocabulary } from './vocabulary.ts';
import { encodeWav } from './wav.ts';
import { DEFAULT_WHISPER_MODEL_DIR, WhisperStt } from './whisper.ts';
import { timerMsSchema } from '../domain/durations.ts';

/**
 * How spoken turns reach the unit: `bridge` streams PCM over the bridge socket (audio_chunk); `acoustic`
 * plays each utterance on an audio device and records the reply from another (docs/voice.md, "Acoustic link").
 */
export const VoiceLinkSchema = z.discriminatedUnion('type', [
  z.strictObject({ type: z.literal('bridge') }),
  z.strictObject({
    type: z.literal('acoustic'),
    ...AcousticDevicesSchema.shape,
    /** output + input latency of the devices in ms (subtracted from reply latencies); absent: measured at start through `loopbackInput`, else 0 */
    latencyMs: z.number().min(0).optional(),
    /** a source that hears `output` (its monitor, a microphone at the loudspeaker, a loopback cable): the latency is measured through it */
    loopbackInput: z.string().min(1).optional(),
    vad: CaptureVadSchema.default(CaptureVadSchema.parse({})),
  }),
]);
export type VoiceLinkConfig = z.infer<typeof VoiceLinkSchema>;

/** The campaign's `voice:` section. */
export const VoiceConfigSchema = z.strictObject({
  /** spoken turns instead of typed ones */
  enabled: z.boolean().default(true),
  link: VoiceLinkSchema.default({ type: 'bridge' }),
  acoustics: CabinAcousticsSchema.default({ snrDb: null, noise: { kind: 'road', seed: 1 }, bandLimit: null, clip: null }),
  /** stream driver audio at real time (a live microphone); false is faster and gives the same recognition */
  realtime: z.boolean().default(false),
  replyTimeoutMs: timerMsSchema().default(15_000),
  /** how the bench transcribes spoken replies */
  replyRecognizer: z
    .discriminatedUnion('engine', [
      z.strictObject({ engine: z.literal('pocketsphinx') }),
      z.strictObject({ engine: z.literal('whisper'), modelDir: z.string().default(DEFAULT_WHISPER_MODEL_DIR) }),
    ])
    .default({ engine: 'pocketsphinx' }),
  /** trim reply audio to speech with Silero VAD before transcribing */
  vad: z.boolean().default(true),
  /** utterance library folder (relative to the campaign file): recordings used in place of synthesis */
  library: z.string().optional(),
  /** store each turn's driver and reply audio as WAV next to the run's results */
  saveAudio: z.boolean().default(true),
});
export type VoiceConfig = z.infer<typeof VoiceConfigSchema>;
export type VoiceConfigInput = z.input<typeof VoiceConfigSchema>;

/** Problems that would stop a voice campaign, each naming what to install; empty when ready. */
export async function checkVoicePrerequisites(config?: VoiceConfig): Promise<string[]> {
  const problems: string[] = [];
  try {
    await runProgram(ESPEAK_NG, ['--version']);
  } catch {
    problems.push(missingProgramMessage(ESPEAK_NG));
  }
  try {
    await runProgram(POCKETSPHINX, ['-logfn', '/dev/null', '-help', 'yes']).catch((error: VoiceError) => {
      if (error.message.includes('not found on PATH')) throw error;
    });
  } catch {
    problems.push(missingProgramMessage(POCKETSPHINX));
  }
  if (!existsSync(join(POCKETSPHINX_ACOUSTIC_MODEL, 'mdef'))) problems.push(`${POCKETSPHINX_ACOUSTIC_MODEL} is missing: install the Debian package "pocketsphinx-en-us"`);
  if (config?.replyRecognizer.engine === 'whisper') {
    const dir = resolve(config.replyRecognizer.modelDir);
    if (!existsSync(join(dir, 'config.json'))) problems.push(`Whisper model not found at ${dir}`);
  }
  return problems;
}

export interface CreateBenchVoiceOptions {
  link: AudioLink;
  /** the campaign's seed phrases: their wording joins the recognisers' vocabulary */
  seeds?: readonly SeedPhrase[];
  /** extra reply sentences the head unit is known to say */
  replySentences?: readonly string[];
  worldSeed?: number;
  /** folder the campaign file is in (resolves `library`) */
  baseDir?: string;
}

/** Builds the bench's voice side from the campaign's `voice:` section. */
export async function createBenchVoice(config: VoiceConfig, options: CreateBenchVoiceOptions): Promise<BenchVoice> {
  const replyStt =
    config.replyRecognizer.engine === 'whisper'
      ? new WhisperStt(resolve(options.baseDir ?? '.', config.replyRecognizer.modelDir))
      : new PocketsphinxStt({ vocabulary: [...replyVocabulary(options.worldSeed), ...(options.replySentences ?? []), ...driverVocabulary(options.seeds)] });
  return new BenchVoice({
    link: options.link,
    tts: new EspeakTts(),
    replyStt,
    vad: config.vad ? new SileroVad() : undefined,
    acoustics: config.acoustics,
    // over the air the utterance plays at its own pace: the end of speech is timed as it leaves the loudspeaker
    realtime: config.realtime || config.link.type === 'acoustic',
    replyTimeoutMs: config.replyTimeoutMs,
    library: config.library ? await loadUtteranceLibrary(resolve(options.baseDir ?? '.', config.library)) : undefined,
  });
}

/** A turn's driver and reply audio as WAV artifacts, stored with the conversation (the report and the bench app play them). */
export function turnAudioArtifacts(result: SpokenTurnResult, turn: number): Array<{ name: string; mime: 'audio/wav'; bytes: Buffer }> {
  const artifacts = [{ name: `turn${turn}-driver.wav`, mime: 'audio/wav' as const, bytes: encodeWav(result.driverAudio) }];
  if (result.replyAudio && result.replyAudio.samples.length > 0) artifacts.push({ name: `turn${turn}-reply.wav`, mime: 'audio/wav', bytes: encodeWav(result.replyAudio) });
  return artifacts;
}

/**
 * The audio devices of an acoustic link exist on an answering sound server: the bench's (`link`) and the reference
 * unit's (`unit`, its microphone and loudspeaker); throws one line naming the device, its config field and the fix.
 */
export async function checkAcousticDevices(link: Extract<VoiceLinkConfig, { type: 'acoustic' }> | null, unit: AcousticDevices | undefined, env?: NodeJS.ProcessEnv): Promise<void> {
  const wanted: WantedAudioDevice[] = [];
  if (link) {
    wanted.push({ kind: 'output', name: link.output, field: 'voice.link.output' }, { kind: 'input', name: link.input, field: 'voice.link.input' });
    if (link.loopbackInput && link.latencyMs === undefined) wanted.push({ kind: 'input', name: link.loopbackInput, field: 'voice.link.loopbackInput' });
  }
  if (unit) wanted.push({ kind: 'input', name: unit.input, field: 'headUnit.acoustic.input' }, { kind: 'output', name: unit.output, field: 'headUnit.acoustic.output' });
  await checkAudioDevices(wanted, env);
}

/**
 * The bench's end of an acoustic link, recording and ready: the device latency is the configured one,
 * or measured through `loopbackInput`, or 0 (then reply latencies include the devices' own; logged).
 */
export async function openBenchAcousticLink(link: Extract<VoiceLinkConfig, { type: 'acoustic' }>, log: (line: string) => void, env?: NodeJS.ProcessEnv): Promise<AcousticLink> {
  let latencyMs = link.latencyMs;
  if (latencyMs === undefined && link.loopbackInput) {
    latencyMs = await measureLoopbackLatency({ output: link.output, loopbackInput: link.loopbackInput, env });
    log(`voice: acoustic link ${link.output} → ${link.input}: device latency ${latencyMs.toFixed(1)} ms (loopback through ${link.loopbackInput})`);
  } else if (latencyMs === undefined) {
    log(`voice: acoustic link ${link.output} → ${link.input}: no latencyMs and no loopbackInput, reply latencies include the devices' own latency`);
  }
  const acoustic = new AcousticLink({
    devices: { output: link.output, input: link.input },
    speaks: 'to_unit',
    vad: link.vad,
    latencyMs: latencyMs ?? 0,
    fields: { output: 'voice.link.output', input: 'voice.link.input' },
    env,
    onRigFault: (fault) => log(`voice: rig fault on ${fault.device} (${fault.kind}): ${fault.detail}`),
  });
  await acoustic.open();
  return acoustic;
}
