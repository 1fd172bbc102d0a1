import { existsSync, readdirSync } from 'node:fs';
import { basename, dirname, join, resolve } from 'node:path';
import { toFloat } from './dsp.ts';
import { VoiceError, type Pcm16, type SttEngine, type TranscribeOptions, type Transcript } from './types.ts';
import { packagePath } from '../domain/package-files.ts';

/** Where the bench looks for a Whisper model by default (ONNX export, transformers.js layout): the repository's models/whisper-tiny.en, absolute so it does not depend on the working directory or the config's folder. */
export const DEFAULT_WHISPER_MODEL_DIR = packagePath('models', 'whisper-tiny.en');

const REQUIRED_FILES = ['config.json', 'preprocessor_config.json', 'tokenizer.json'];

/** The files missing from a Whisper model folder (empty when it looks complete). */
export function missingWhisperFiles(modelDir: string): string[] {
  const missing = REQUIRED_FILES.filter((f) => !existsSync(join(modelDir, f)));
  const onnxDir = join(modelDir, 'onnx');
  const onnx = existsSync(onnxDir) ? readdirSync(onnxDir) : [];
  if (!onnx.some((f) => f.startsWith('encoder_model') && f.endsWith('.onnx'))) missing.push('onnx/encoder_model*.onnx');
  if (!onnx.some((f) => f.startsWith('decoder_model') && f.endsWith('.onnx'))) missing.push('onnx/decoder_model_merged*.onnx');
  return missing;
}

type AsrPipeline = (audio: Float32Array) => Promise<{ text: string } | Array<{ text: string }>>;

/**
 * Whisper through @huggingface/transformers on onnxruntime, loaded only from local files
 * (remote downloads are switched off). No model ships with the bench; put an ONNX export such as
 * onnx-community/whisper-tiny.en under models/ on a machine that has it.
 */
export class WhisperStt implements SttEngine {
  readonly name: string;
  private readonly modelDir: string;
  private pipeline: Promise<AsrPipeline> | null = null;

  constructor(modelDir: string = DEFAULT_WHISPER_MODEL_DIR) {
    this.modelDir = resolve(modelDir);
    this.name = `whisper:${basename(this.modelDir)}`;
  }

  private load(): Promise<AsrPipeline> {
    this.pipeline ??= (async () => {
      const missing = missingWhisperFiles(this.modelDir);
      if (missing.length)
        throw new VoiceError(
          `Whisper model not found at ${this.modelDir} (missing ${missing.join(', ')}). ` +
            'Copy an ONNX Whisper export (e.g. onnx-community/whisper-tiny.en) there; the bench never downloads models.',
        );
      const transformers = await import('@huggingface/transformers');
      transformers.env.allowRemoteModels = false;
      transformers.env.allowLocalModels = true;
      transformers.env.localModelPath = dirname(this.modelDir) + '/';
      const asr = await transformers.pipeline('automatic-speech-recognition', basename(this.modelDir), { local_files_only: true });
      return asr as unknown as AsrPipeline;
    })();
    return this.pipeline;
  }

  async transcribe(pcm: Pcm16, options: TranscribeOptions = {}): Promise<Transcript> {
    const asr = await this.load();
    try {
      const out = await asr(toFloat(pcm.samples));
      const text = (Array.isArray(out) ? out.map((o) => o.text).join(' ') : out.text).trim();
      return { text };
    } catch (error) {
      throw new VoiceError(`${options.source ?? 'audio'}: Whisper failed (${(error as Error).message})`);
    }
  }
}
