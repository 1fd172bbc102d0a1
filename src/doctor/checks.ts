import { execFile } from 'node:child_process';
import { statfs } from 'node:fs/promises';
import { promisify } from 'node:util';
import { CANPLAYER, CANDUMP, ESPEAK_NG, findOnPath, NVIDIA_SMI, PACAT, PACTL, POCKETSPHINX, RECORDERS, type SystemProgram } from '../system/programs.ts';

/**
 * The doctor's checks: prerequisites of the bench (Node, native modules, disk, GPU, model servers and models,
 * the system programs it runs). Used by `icabench doctor` and the bench app's rig status.
 */

// the model clients (openai, ollama, node-llama-cpp) load only when the doctor runs, not on every CLI start
const llm = () => import('../llm/index.ts');
const manifests = () => import('../llm/manifest.ts');

/** One line of the doctor's report. */
export interface DoctorResult {
  name: string;
  status: 'ok' | 'warn' | 'fail';
  detail: string;
  /** the command or step that fixes the gap */
  fix?: string;
}

export interface DoctorContext {
  /** model references to check (from --model and the manifest) */
  models: string[];
  manifest?: string;
  allowedHosts: string[];
  ollamaHost?: string;
}

/** A check is a small function; areas add theirs with addDoctorCheck (e.g. serial ports, audio devices). */
export type DoctorCheck = (context: DoctorContext) => Promise<DoctorResult[]>;

const execFileAsync = promisify(execFile);

/** Checks for the programs the bench runs (src/system/programs.ts): the same binaries, so a pass means they run. */
export function programCheck(name: string, programs: readonly SystemProgram[], purpose: string): DoctorCheck {
  return async () => {
    const found = await Promise.all(programs.map((p) => findOnPath(p.binary)));
    const missing = programs.filter((_, i) => !found[i]);
    const packages = [...new Set(missing.map((p) => p.debianPackage))];
    return [
      missing.length === 0
        ? { name, status: 'ok', detail: `${programs.map((p) => p.binary).join(', ')} found; used for ${purpose}` }
        : { name, status: 'warn', detail: `${missing.map((p) => p.binary).join(', ')} not on PATH; needed for ${purpose}`, fix: `sudo apt-get install ${packages.join(' ')}` },
    ];
  };
}

export const nodeVersionCheck: DoctorCheck = async () => {
  const [major, minor] = process.versions.node.split('.').map(Number);
  const ok = major > 20 || (major === 20 && minor >= 19);
  return [ok ? { name: 'node', status: 'ok', detail: `Node ${process.versions.node}` } : { name: 'node', status: 'fail', detail: `Node ${process.versions.node}; the bench needs ≥ 20.19`, fix: 'install Node 20 LTS (e.g. nvm install 20)' }];
};

export const sqliteCheck: DoctorCheck = async () => {
  try {
    const { default: Database } = await import('better-sqlite3');
    const db = new Database(':memory:');
    db.prepare('select 1').get();
    db.close();
    return [{ name: 'better-sqlite3', status: 'ok', detail: 'native module loads (results store)' }];
  } catch (error) {
    return [{ name: 'better-sqlite3', status: 'fail', detail: `does not load: ${(error as Error).message}`, fix: 'npm rebuild better-sqlite3' }];
  }
};

export const diskCheck: DoctorCheck = async () => {
  const stats = await statfs(process.cwd());
  const freeGb = (stats.bavail * stats.bsize) / 1e9;
  const detail = `${freeGb.toFixed(1)} GB free in ${process.cwd()}`;
  if (freeGb < 1) return [{ name: 'disk', status: 'fail', detail, fix: 'free disk space (runs/ and models/ grow)' }];
  if (freeGb < 10) return [{ name: 'disk', status: 'warn', detail: `${detail}; local models need ~10 GB each`, fix: 'free disk space before pulling models' }];
  return [{ name: 'disk', status: 'ok', detail }];
};

export const gpuCheck: DoctorCheck = async () => {
  const smi = await findOnPath(NVIDIA_SMI.binary);
  if (!smi) return [{ name: 'gpu', status: 'warn', detail: 'nvidia-smi not found: no NVIDIA GPU visible; local models run on CPU (slow)', fix: 'install the NVIDIA driver (sudo apt-get install nvidia-driver) on the GPU workstation' }];
  try {
    const { stdout } = await execFileAsync(smi, ['-L'], { timeout: 5000 });
    const gpus = stdout.trim().split('\n').filter(Boolean);
    return [{ name: 'gpu', status: gpus.length ? 'ok' : 'warn', detail: gpus.length ? gpus.join('; ') : 'nvidia-smi lists no GPU' }];
  } catch (error) {
    return [{ name: 'gpu', status: 'warn', detail: `nvidia-smi failed: ${(error as Error).message}`, fix: 'check the NVIDIA driver (nvidia-smi)' }];
  }
};

export const ollamaCheck: DoctorCheck = async (context) => {
  const { guardedFetch, LlmError, resolveOllamaHost } = await llm();
  const host = resolveOllamaHost(context.ollamaHost);
  try {
    const response = await guardedFetch({ allowedHosts: context.allowedHosts })(`${host}/api/version`, { signal: AbortSignal.timeout(2000) });
    const body = (await response.json()) as { version?: string };
    return [{ name: 'ollama', status: 'ok', detail: `Ollama ${body.version ?? '?'} at ${host}` }];
  } catch (error) {
    if (error instanceof LlmError) return [{ name: 'ollama', status: 'fail', detail: error.message, fix: 'point OLLAMA_HOST at loopback or pass --allowed-host for a lab host' }];
    return [{ name: 'ollama', status: 'warn', detail: `no Ollama at ${host} (OLLAMA_HOST ${process.env.OLLAMA_HOST ? `= ${process.env.OLLAMA_HOST}` : 'unset'})`, fix: 'install from ollama.com, then: ollama serve' }];
  }
};

export const modelsCheck: DoctorCheck = async (context) => {
  const { checkModelAvailability } = await llm();
  const results: DoctorResult[] = [];
  for (const ref of context.models) {
    const availability = await checkModelAvailability(ref, { allowedHosts: context.allowedHosts, ollamaHost: context.ollamaHost, checkGgufRuntime: true });
    results.push({ name: `model ${ref}`, status: availability.available ? 'ok' : 'fail', detail: availability.detail, ...(availability.fix ? { fix: availability.fix } : {}) });
  }
  return results;
};

export const manifestFilesCheck: DoctorCheck = async (context) => {
  if (!context.manifest) return [];
  const { loadModelManifest, verifyManifestFiles } = await manifests();
  const manifest = await loadModelManifest(context.manifest);
  return (await verifyManifestFiles(manifest)).map((check) => ({
    name: `file ${check.set}.${check.role}`,
    status: check.status === 'ok' ? 'ok' : check.status === 'no_checksum' ? 'warn' : 'fail',
    detail: `${check.file}: ${check.detail}`,
    ...(check.status === 'ok' ? {} : { fix: check.status === 'checksum_mismatch' ? 're-download the file or update sha256 in the manifest' : `place the file at ${check.file}` }),
  }));
};

/** The sound server's devices with their input levels, for the acoustic link (docs/voice.md); only a warning without one. */
export const audioDevicesCheck: DoctorCheck = async () => {
  const { describeAudioDevice, listAudioDevices } = await import('../system/audio-devices.ts');
  try {
    const devices = await listAudioDevices({ listenMs: 300 });
    const outputs = devices.filter((d) => d.kind === 'output').map((d) => d.name);
    const inputs = devices.filter((d) => d.kind === 'input').map((d) => `${d.name} (${describeAudioDevice(d)})`);
    return [{ name: 'audio devices', status: 'ok', detail: `outputs: ${outputs.join(', ') || 'none'}; inputs: ${inputs.join('; ') || 'none'}` }];
  } catch (error) {
    return [{ name: 'audio devices', status: 'warn', detail: `${(error as Error).message}; needed only for voice.link acoustic`, fix: 'start PulseAudio or PipeWire (bash scripts/virtual-audio.sh start for a virtual sound card)' }];
  }
};

/** The system programs, each checked by the constant its runner spawns. */
export const programChecks: DoctorCheck[] = [
  programCheck('speech synthesis', [ESPEAK_NG], 'the voice path (text to speech)'),
  programCheck('speech recognition', [POCKETSPHINX], 'the voice path (offline recognition)'),
  programCheck('audio capture', [RECORDERS.sox], 'recording from the microphone (icabench voice)'),
  programCheck('can-utils', [CANPLAYER, CANDUMP], 'replaying frames on and observing a SocketCAN interface'),
  programCheck('pulseaudio-utils', [PACAT, PACTL], 'the acoustic link (playing on and recording from audio devices)'),
];

/** The checks in report order; other areas append theirs with addDoctorCheck. */
export const doctorChecks: DoctorCheck[] = [
  nodeVersionCheck,
  sqliteCheck,
  diskCheck,
  gpuCheck,
  ollamaCheck,
  modelsCheck,
  manifestFilesCheck,
  ...programChecks,
  audioDevicesCheck,
];

export function addDoctorCheck(check: DoctorCheck): void {
  doctorChecks.push(check);
}

export async function runDoctor(context: DoctorContext, checks: readonly DoctorCheck[] = doctorChecks): Promise<DoctorResult[]> {
  const results: DoctorResult[] = [];
  for (const check of checks) {
    try {
      results.push(...(await check(context)));
    } catch (error) {
      results.push({ name: check.name || 'check', status: 'fail', detail: `check crashed: ${(error as Error).message}` });
    }
  }
  return results;
}
