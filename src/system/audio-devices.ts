import { spawn } from 'node:child_process';
import { PACAT, PACTL, missingProgramMessage } from './programs.ts';

/** A sample at or above this is clipping: the input gain is too high. */
export const CLIP_LEVEL = 32_000;
/** An input whose loudest sample stays at or under this has no signal behind it (digital silence). */
export const DEAD_INPUT_PEAK = 2;

/** One device of the sound server (PulseAudio/PipeWire); inputs carry the level measured on them. */
export interface AudioDevice {
  kind: 'output' | 'input';
  name: string;
  /** loudest sample and RMS in dBFS over a short recording; `fault`: a rig fault (clipping, or an input with no signal at all) */
  level?: { peakDb: number; rmsDb: number; fault: 'clipping' | 'dead_input' | null };
}

/** A failure to reach the sound server or its programs, naming the fix. */
export class AudioDeviceError extends Error {}

function run(binary: string, args: string[], env: NodeJS.ProcessEnv | undefined): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(binary, args, { env: env ?? process.env });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString('utf8')));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
    child.on('error', (error: NodeJS.ErrnoException) => reject(new AudioDeviceError(error.code === 'ENOENT' ? missingProgramMessage(PACTL) : error.message)));
    child.on('close', (code) =>
      code === 0
        ? resolve(stdout)
        : reject(new AudioDeviceError(`no sound server answered (${stderr.trim().split('\n')[0] || `${binary} exit ${code}`}): start PulseAudio or PipeWire, or \`bash scripts/virtual-audio.sh start\` for a virtual sound card`)),
    );
  });
}

/** Records `ms` of raw 16-bit mono PCM from a source with pacat; null when it delivers nothing. */
function sampleInput(name: string, ms: number, env: NodeJS.ProcessEnv | undefined): Promise<Int16Array | null> {
  return new Promise((resolve) => {
    const child = spawn(PACAT.binary, ['--record', `--device=${name}`, '--raw', '--format=s16le', '--rate=16000', '--channels=1'], { env: env ?? process.env });
    const parts: Buffer[] = [];
    child.stdout.on('data', (chunk: Buffer) => parts.push(chunk));
    child.on('error', () => resolve(null));
    const timer = setTimeout(() => child.kill('SIGTERM'), ms);
    child.on('close', () => {
      clearTimeout(timer);
      const bytes = Buffer.concat(parts);
      resolve(bytes.length < 2 ? null : new Int16Array(bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.length - (bytes.length % 2))));
    });
  });
}

const dbfs = (value: number) => (value <= 0 ? -120 : Math.round(20 * Math.log10(value / 32768) * 10) / 10);

/**
 * The sinks (outputs) and sources (inputs) of the sound server, each input measured for `listenMs`
 * (`icabench voice devices`, the doctor and the rig status screen; the acoustic link plays on an output and records an input).
 */
export async function listAudioDevices(options: { env?: NodeJS.ProcessEnv; listenMs?: number } = {}): Promise<AudioDevice[]> {
  const names = async (what: 'sinks' | 'sources') =>
    (await run(PACTL.binary, ['list', 'short', what], options.env))
      .split('\n')
      .map((line) => line.split('\t')[1])
      .filter((name): name is string => Boolean(name));
  const devices: AudioDevice[] = (await names('sinks')).map((name) => ({ kind: 'output', name }));
  const sources = await names('sources');
  // every input listened to at once: the check takes one listening time, not one per input
  const recorded = await Promise.all(sources.map((name) => sampleInput(name, options.listenMs ?? 500, options.env)));
  for (const [i, name] of sources.entries()) {
    const samples = recorded[i];
    if (!samples || samples.length === 0) {
      devices.push({ kind: 'input', name });
      continue;
    }
    let peak = 0;
    let sum = 0;
    for (const s of samples) (peak = Math.max(peak, Math.abs(s))), (sum += s * s);
    const fault = peak >= CLIP_LEVEL ? 'clipping' : peak <= DEAD_INPUT_PEAK ? 'dead_input' : null;
    devices.push({ kind: 'input', name, level: { peakDb: dbfs(peak), rmsDb: dbfs(Math.sqrt(sum / samples.length)), fault } });
  }
  return devices;
}

/** One line for a device: its kind, name and level, with a rig fault spelled out. */
export function describeAudioDevice(device: AudioDevice): string {
  if (!device.level) return device.kind === 'input' ? 'no audio' : '';
  const { peakDb, rmsDb, fault } = device.level;
  const note = fault === 'clipping' ? '  RIG FAULT: clipping (lower the gain)' : fault === 'dead_input' ? '  RIG FAULT: silent (no signal: check the cable, the gain or the mute switch; an idle monitor is silent too)' : '';
  return `peak ${peakDb} dBFS, rms ${rmsDb} dBFS${note}`;
}
