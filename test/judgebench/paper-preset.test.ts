import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { main } from '../../src/cli/main.ts';
import { loadJudgeBenchConfig } from '../../src/judgebench/config.ts';
import type { Pair } from '../../src/judgebench/dataset.ts';
import { generateDataset } from '../../src/judgebench/generator.ts';
import { summarize, type ConfigurationSummary, type JudgeConfiguration, type PairResult } from '../../src/judgebench/runner.ts';
import { startFakeLlmServer, type FakeLlmServer } from '../helpers/fakeLlmServer.ts';
import { fakeJudgeModel } from './fakeJudgeModel.ts';

const PRESET = new URL('../../bench-configs/judge-bench/judge-bench-paper.yaml', import.meta.url).pathname;

/** 600 results as Habicht et al.'s Table 4 first row implies: of 100 correct pairs 98 judged fitting, of 500 wrong pairs 5 judged fitting. */
function table4Results(correctFits: number, wrongFits: number): PairResult[] {
  const result = (i: number, label: boolean, fits: boolean): PairResult => ({ id: `p${i}`, label, errorCategory: label ? 'none' : 'cost', fits, correct: fits === label, latencyMs: 1, calls: 1, tokensIn: 1, tokensOut: 1 });
  return [
    ...Array.from({ length: 100 }, (_, i) => result(i, true, i < correctFits)),
    ...Array.from({ length: 500 }, (_, i) => result(100 + i, false, i < wrongFits)),
  ];
}
const configuration: JudgeConfiguration = { judge: 'ar', technique: 'ar', models: [], judgePair: async () => ({ fits: null, calls: 0, tokensIn: 0, tokensOut: 0 }) };

describe('judge benchmark, the paper preset (Habicht et al.)', () => {
  it('F1 with "correct" as the positive class reproduces Table 4 (P 0.951 R 0.980 F1 0.966; P 0.952 R 1.000 F1 0.976)', () => {
    const first = summarize(configuration, table4Results(98, 5), {}, 'paper');
    expect(first.positiveClass).toBe('correct');
    expect([first.precision, first.recall, first.f1].map((x) => x.toFixed(3))).toEqual(['0.951', '0.980', '0.966']);
    const second = summarize(configuration, table4Results(100, 5), {}, 'paper');
    expect([second.precision, second.recall, second.f1].map((x) => x.toFixed(3))).toEqual(['0.952', '1.000', '0.976']);
    // the same judgments with "wrong" as the positive class (lab) give figures the table does not show
    const lab = summarize(configuration, table4Results(98, 5), {}, 'lab');
    expect(lab.positiveClass).toBe('wrong');
    expect([lab.precision, lab.recall].map((x) => x.toFixed(3))).toEqual(['0.996', '0.990']);
  });

  describe('the shipped preset runs offline (its model judges on a fake OpenAI-compatible server)', () => {
    let server: FakeLlmServer;
    const pairs: Pair[] = generateDataset({ seed: 42, users: 2, includePreferences: true });
    beforeAll(async () => {
      server = await startFakeLlmServer({ respond: fakeJudgeModel(pairs) });
    });
    afterAll(async () => server.close());

    it('states the preset in every summary entry and scores with "correct" as the positive class', async () => {
      const shipped = loadJudgeBenchConfig(PRESET);
      expect(shipped.method).toBe('paper');
      const dir = mkdtempSync(join(tmpdir(), 'judgebench-paper-'));
      const ref = (name: string) => `openai-compat:${server.url}/v1#${name}`;
      // the preset with the generated set cut to 2 users and its model references pointed at the fake server
      const yaml = readFileSync(PRESET, 'utf8')
        .replace('users: 100', 'users: 2')
        .replace('["ollama:qwen2.5:14b"]', `["${ref('truthful')}"]`)
        .replace('["ollama:qwen2.5:14b", "ollama:llama3.1:8b", "ollama:mistral:7b"]', `["${ref('truthful')}", "${ref('truthful-b')}", "${ref('contrary-persuadable')}"]`);
      writeFileSync(join(dir, 'preset.yaml'), yaml);
      const out = join(dir, 'out');
      await main(['node', 'icabench', 'judge-bench', join(dir, 'preset.yaml'), '--out', out]);
      expect(process.exitCode ?? 0).toBe(0);
      const summary = JSON.parse(readFileSync(join(out, 'summary.json'), 'utf8')) as ConfigurationSummary[];
      expect(summary.map((s) => `${s.judge}/${s.technique}`)).toEqual(['oracle/rules', ...['io', 'cot-1', 'cot-3', 'cot-5', 'sc-3', 'sc-5', 'mab', 'mad'].map((t) => `qwen2.5-14b/${t}`), 'roundtable/ar']);
      for (const s of summary) {
        expect(s.preset).toEqual({ method: 'paper', statement: expect.stringMatching(/^paper preset: Habicht et al\./) });
        expect(s.positiveClass).toBe('correct');
        expect(s.f1).toBe(1);
      }
      // every model call of the preset ran at temperature 0
      expect(new Set(server.chatRequests().map((r) => r.body.temperature))).toEqual(new Set([0]));
      expect(readFileSync(join(out, 'report.html'), 'utf8')).toContain('Positive class: the recommendation is correct');
    }, 120_000);
  });
});
