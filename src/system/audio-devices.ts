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

/** How to get a missing device: the same words wherever a device fails. */
export const AUDIO_DEVICE_FIX = 'start the sound server (without hardware: `bash scripts/virtual-audio.sh start`) and check the device names with `icabench voice devices`';

/** A sound server that does not answer within this long counts as not there (pactl waits for a hung server otherwise). */
const SOUND_SERVER_TIMEOUT_MS = 5_000;

function run(binary: string, args: string[], env: NodeJS.ProcessEnv | undefined): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(binary, args, { env: env ?? process.env });
    const timer = setTimeout(() => child.kill('SIGKILL'), SOUND_SERVER_TIMEOUT_MS);
    child.on('close', () => clearTimeout(timer));
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString('utf8')));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
    child.on('error', (error: NodeJS.ErrnoException) => reject(new AudioDeviceError(error.code === 'ENOENT' ? missingProgramMessage(PACTL) : error.message)));
    child.on('close', (code) =>
      code === 0
        ? resolve(stdout)
        : reject(new AudioDeviceError(`no sound server answered (${stderr.trim().split('\n')[0] || (code === null ? `no answer within ${SOUND_SERVER_TIMEOUT_MS} ms` : `${binary} exit ${code}`)}): start PulseAudio or PipeWire, or \`bash scripts/virtual-audio.sh start\` for a virtual sound card`)),
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
  const devices: AudioDevice[] = (await deviceNames('sinks', options.env)).map((name) => ({ kind: 'output', name }));
  const sources = await deviceNames('sources', options.env);
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

/** A device a run plays on or records from, with the config field that names it. */
export interface WantedAudioDevice {
  kind: 'output' | 'input';
  name: string;
  field: string;
}

async function deviceNames(what: 'sinks' | 'sources', env: NodeJS.ProcessEnv | undefined): Promise<string[]> {
  return (await run(PACTL.binary, ['list', 'short', what], env))
    .split('\n')
    .map((line) => line.split('\t')[1])
    .filter((name): name is string => Boolean(name));
}

/**
 * Checks, before anything plays or records, that the sound server answers and has every device a run names;
 * throws an AudioDeviceError of one line naming the device, its config field and the fix.
 */
export async function checkAudioDevices(wanted: readonly WantedAudioDevice[], env?: NodeJS.ProcessEnv): Promise<void> {
  if (wanted.length === 0) return;
  let sinks: string[];
  let sources: string[];
  try {
    [sinks, sources] = await Promise.all([deviceNames('sinks', env), deviceNames('sources', env)]);
  } catch (error) {
    const first = wanted[0]!;
    throw new AudioDeviceError(`audio device "${first.name}" (${first.field}): ${(error as Error).message}; \`icabench voice devices\` lists the devices`);
  }
  for (const device of wanted) {
    const known = device.kind === 'output' ? sinks : sources;
    if (known.includes(device.name)) continue;
    const what = device.kind === 'output' ? 'output (sink)' : 'input (source)';
    throw new AudioDeviceError(`audio device "${device.name}" (${device.field}) is not an ${what} of the sound server (it has: ${known.join(', ') || 'none'}): ${AUDIO_DEVICE_FIX}`);
  }
}

/** One line for a device: its kind, name and level, with a rig fault spelled out. */
export function describeAudioDevice(device: AudioDevice): string {
  if (!device.level) return device.kind === 'input' ? 'no audio' : '';
  const { peakDb, rmsDb, fault } = device.level;
  const note = fault === 'clipping' ? '  RIG FAULT: clipping (lower the gain)' : fault === 'dead_input' ? '  RIG FAULT: silent (no signal: check the cable, the gain or the mute switch; an idle monitor is silent too)' : '';
  return `peak ${peakDb} dBFS, rms ${rmsDb} dBFS${note}`;
}
