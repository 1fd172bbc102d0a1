import type { Command } from 'commander';
import { runDoctor } from '../../doctor/checks.ts';

const manifests = () => import('../../llm/manifest.ts');

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
    .option('--configs <dir>', 'also check the models the campaign configs in this folder name, as the bench app\'s rig status does', 'bench-configs')
    .action(async (options: { json?: boolean; model: string[]; manifest?: string; set?: string; allowedHost: string[]; configs: string }) => {
      // the same list the rig status checks: the models the bench configs name (every kind, every role), then the ones asked for
      const { ConfigCatalog } = await import('../../server/configs.ts');
      const { campaignConfigSchemaFor, configModelRefs } = await import('../../kinds/registry.ts');
      const catalog = new ConfigCatalog(options.configs, campaignConfigSchemaFor);
      const configured = await catalog.modelRefs(configModelRefs);
      const models = [...configured, ...options.model, ...(options.manifest ? await manifestRefs(options.manifest, options.set) : [])];
      const results = await runDoctor({ models: [...new Set(models)], manifest: options.manifest, allowedHosts: options.allowedHost });
      // configs whose unit is text-only (http) and that name no model judge: most of their turns would stay undecided
      const { textOnlyConfigWarnings } = await import('../../kinds/dialogue/text-only.ts');
      results.push(...textOnlyConfigWarnings(await Promise.all((await catalog.list()).filter((c) => c.valid).map((c) => catalog.read(c.name)))));
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
