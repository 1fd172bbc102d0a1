import { copyFileSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runCli } from '../helpers/cli.ts';

/**
 * `icabench doctor` checks the models the campaign configs name, as the bench app's rig status does (one list: the
 * models each kind says its config names, src/run/kind.ts `modelRefs`): a tool-agents config's deterministic `rule`
 * judge and `deterministic` user are not model references (the rig status once showed `model rule: FAIL`).
 */
describe('icabench doctor and the rig status check the same models', () => {
  it('lists the model references of every kind of config, and no deterministic tier as a model', { timeout: 120_000 }, async () => {
    const configs = mkdtempSync(join(tmpdir(), 'doctor-configs-'));
    copyFileSync('bench-configs/carbench-train.yaml', join(configs, 'carbench-train.yaml'));
    writeFileSync(join(configs, 'm.yaml'), 'kind: manual-qa\nname: m\nmanual: [x.xml]\njudges: [oracle, "ollama:manual-judge"]\n');
    const ran = await runCli(['doctor', '--json', '--configs', configs], { OLLAMA_HOST: 'http://127.0.0.1:9' });
    const names = (JSON.parse(ran.stdout) as { results: { name: string }[] }).results.map((r) => r.name);
    expect(names.filter((n) => n.startsWith('model '))).toEqual(['model ollama:manual-judge']);
  });
});

describe('the dialogue kind names no deterministic tier as a model', () => {
  it('template, oracle and the scripted user are left out; model references stay', async () => {
    const { dialogueKind } = await import('../../src/kinds/dialogue/kind.ts');
    const { CampaignConfigSchema } = await import('../../src/kinds/dialogue/config.ts');
    const config = (simulator: string, judges: string[]) => CampaignConfigSchema.parse({ name: 'x', seeds: 'seeds.yaml', conversations: 1, simulator, judges });
    expect(dialogueKind.modelRefs(config('script', ['oracle']))).toEqual([]);
    expect(dialogueKind.modelRefs(config('template', ['oracle', 'ollama:judge']))).toEqual(['ollama:judge']);
  });
});
