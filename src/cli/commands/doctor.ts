import { execFile } from 'node:child_process';
import { access, constants, statfs } from 'node:fs/promises';
import { delimiter, join } from 'node:path';
import { promisify } from 'node:util';
import type { Command } from 'commander';

// the model clients (openai, ollama, node-llama-cpp) load only when the doctor runs, not on every CLI start
const llm = () => import('../../llm/index.ts');
const manifests = () => import('../../llm/manifest.ts');

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

async function onPath(binary: string): Promise<string | null> {
  for (const dir of (process.env.PATH ?? '').split(delimiter)) {
    if (!dir) continue;
    try {
      await access(join(dir, binary), constants.X_OK);
      return join(dir, binary);
    } catch {
      // not in this directory
    }
  }
  return null;
}

function binaryCheck(name: string, binaries: string[], fix: string, purpose: string): DoctorCheck {
  return async () => {
    const found = await Promise.all(binaries.map(onPath));
    const missing = binaries.filter((_, i) => !found[i]);
    return [
      missing.length === 0
        ? { name, status: 'ok', detail: `${binaries.join(', ')} found (${purpose})` }
        : { name, status: 'warn', detail: `${missing.join(', ')} not on PATH; needed for ${purpose}`, fix },
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
  const smi = await onPath('nvidia-smi');
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

/** The checks in report order; other areas append theirs with addDoctorCheck. */
export const doctorChecks: DoctorCheck[] = [
  nodeVersionCheck,
  sqliteCheck,
  diskCheck,
  gpuCheck,
  ollamaCheck,
  modelsCheck,
  manifestFilesCheck,
  binaryCheck('speech synthesis', ['espeak-ng'], 'sudo apt-get install espeak-ng', 'the voice path (text to speech)'),
  binaryCheck('speech recognition', ['pocketsphinx'], 'sudo apt-get install pocketsphinx', 'the voice path (offline recognition)'),
  binaryCheck('audio tools', ['sox'], 'sudo apt-get install sox', 'audio capture and conversion'),
  binaryCheck('can-utils', ['candump', 'cansend'], 'sudo apt-get install can-utils', 'the CAN vehicle context'),
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

/** Model refs named by a manifest set (or all sets). */
async function manifestRefs(path: string, set?: string): Promise<string[]> {
  const { loadModelManifest } = await manifests();
  const manifest = await loadModelManifest(path);
  const sets = set ? { [set]: manifest.sets[set] } : manifest.sets;
  if (set && !manifest.sets[set]) throw new Error(`${path}: no model set "${set}" (has: ${Object.keys(manifest.sets).join(', ')})`);
  return Object.values(sets).flatMap((s) => [s.simulator?.ref, s.judge?.ref, s.embedding?.ref].filter((r): r is string => Boolean(r)));
}

export function registerDoctorCommands(program: Command): void {
  program
    .command('doctor')
    .description('check bench prerequisites: Node, native modules, disk, GPU, model servers and models, speech and CAN tools; prints the fix for each gap')
    .option('--json', 'print the results as JSON')
    .option('--model <ref...>', 'model references to check (ollama:…, openai-compat:…#…, gguf:…)', [])
    .option('--manifest <path>', 'model manifest (models/*.yaml): check its refs and file checksums')
    .option('--set <name>', 'only this model set of the manifest')
    .option('--allowed-host <host...>', 'lab hosts allowed besides loopback', [])
    .action(async (options: { json?: boolean; model: string[]; manifest?: string; set?: string; allowedHost: string[] }) => {
      const models = [...options.model, ...(options.manifest ? await manifestRefs(options.manifest, options.set) : [])];
      const results = await runDoctor({ models: [...new Set(models)], manifest: options.manifest, allowedHosts: options.allowedHost });
      if (options.json) {
        console.log(JSON.stringify({ ok: results.every((r) => r.status !== 'fail'), results }, null, 2));
      } else {
        const mark = { ok: 'ok  ', warn: 'WARN', fail: 'FAIL' } as const;
        for (const r of results) {
          console.log(`${mark[r.status]}  ${r.name}: ${r.detail}`);
          if (r.fix && r.status !== 'ok') console.log(`      fix: ${r.fix}`);
        }
      }
      if (results.some((r) => r.status === 'fail')) process.exitCode = 1;
    });
}
