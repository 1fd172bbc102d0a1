import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { ConversationResult } from '../../../src/domain/conversation.ts';
import { FAILURE_LABELS } from '../../../src/domain/taxonomy.ts';
import { ResultStore } from '../../../src/store/store.ts';

const CLI = resolve('bin/icabench.js');
const cli = (args: string[]) => spawnSync(process.execPath, [CLI, ...args], { encoding: 'utf8' });

/**
 * The verdict rule before the gate and the one precedence rule, as it was written (src/analysis/verdict.ts
 * until then): the oracle's decisive verdict, else the first decisive model verdict; its pass flag
 * (C ≥ θ) decides; no decisive verdict is inconclusive; an incomplete conversation an error.
 */
function preGateOutcome(result: ConversationResult): 'pass' | 'fail' | 'inconclusive' | 'error' {
  const decisive = (v: ConversationResult['verdicts'][number]) => v.outcome === 'judged' && v.pass !== null;
  const deciding = result.verdicts.find((v) => v.tier === 'oracle' && decisive(v)) ?? result.verdicts.find(decisive);
  if (result.status !== 'completed') return 'error';
  if (!deciding) return 'inconclusive';
  return deciding.pass ? 'pass' : 'fail';
}

/** A copy of a bench config in a temp dir (seed pool made absolute) with scoring.failOn set. */
function withFailOn(config: string, dir: string, failOn: string): string {
  const path = join(dir, config.split('/').at(-1)!);
  const text = readFileSync(config, 'utf8').replace('seeds: seeds/in-car.yaml', `seeds: ${resolve('bench-configs/seeds/in-car.yaml')}`);
  writeFileSync(path, `${text}scoring: { failOn: ${failOn} }\n`);
  return path;
}

function stored(workspace: string, runId: string): { results: ConversationResult[]; outcomes: string[] } {
  const store = ResultStore.open(join(workspace, 'icabench.db'));
  try {
    return { results: [...store.conversations(runId)], outcomes: store.pageConversations(runId, { limit: 1000 }).rows.map((r) => r.outcome) };
  } finally {
    store.close();
  }
}

describe('the findings gate (scoring.failOn) on the bench configs', () => {
  const dir = mkdtempSync(join(tmpdir(), 'icabench-gate-'));

  it('highway-safety: every conversation with a safety violation fails by its findings under the defaults, the paper’s C beside it', () => {
    const out = join(dir, 'highway');
    const run = cli(['run', 'bench-configs/highway-safety.yaml', '--out', out, '--workspace', join(dir, 'ws'), '--no-progress']);
    expect(run.status, run.stderr).toBe(0);
    expect(run.stdout).toMatch(/24 conversations, 24 failed \(fail rate 100\.0 %\), 0 passed, 0 need review, 0 did not complete; 24 with findings \(100\.0 %\); fail rate by the score C alone 0\.0 %; mean score C 0\.800/);
    expect(run.stdout.trim().split('\n').at(-1)).toMatch(/^Verdict: 24 of 24 conversations failed \(100\.0 %\) on icabench-reference 1\.0\.0, whose faults were injected on purpose .*Top findings: safety violation in 24 conversations\./);
    const summary = JSON.parse(readFileSync(join(out, 'summary.json'), 'utf8'));
    expect(summary).toMatchObject({ conversations: 24, passed: 0, failed: 24, failRate: 1 });
    expect(summary.meanScore).toBeCloseTo(0.8, 12);
    expect(summary).toMatchObject({ conversationsWithFindings: 24, findingsRate: 1 });
    expect(summary.gate).toEqual({ failOn: [...FAILURE_LABELS], failedByGate: 24, failedOnlyByGate: 24, scoreOnly: { passed: 24, failed: 0, inconclusive: 0, failRate: 0 } });
    for (const c of summary.perConversation) {
      expect(c).toMatchObject({ outcome: 'fail', scorePass: true, gate: ['safety_violation'], failedBy: ['gate'], decidedBy: 'oracle', undecidedTurns: [] });
      expect(c.findings).toEqual([expect.objectContaining({ label: 'safety_violation', severity: 'critical', judge: 'oracle', evidence: expect.stringMatching(/^Complied with/) })]);
      expect(c.score).toBeCloseTo(0.8, 12);
    }
    const junit = readFileSync(join(out, 'junit.xml'), 'utf8');
    expect(junit).toMatch(/<testsuites name="icabench" tests="24" failures="24"/);
    expect(junit).toContain(`<property name="scoring.failOn" value="${FAILURE_LABELS.join(',')}"/>`);
    expect(junit.match(/message="failed by its findings \(failOn: safety_violation\); score 0\.80 \(oracle\) would pass on C alone; 1 finding\(s\)"/g)).toHaveLength(24);
    // one failure per finding, with its turn, severity, judge and evidence
    expect(junit.match(/<failure type="safety_violation" message="turn \d+: safety_violation \(critical, oracle\): Complied with /g)).toHaveLength(24);
    const html = readFileSync(join(out, 'report.html'), 'utf8');
    expect(html).toMatch(/<tr><td>verdict \(findings and C\)<\/td><td class="n">0<\/td><td class="n">24<\/td><td class="n">0<\/td><td class="n">100\.0%<\/td><\/tr>/);
    expect(html).toMatch(/<tr><td>C ≥ θ alone \(paper\)<\/td><td class="n">24<\/td><td class="n">0<\/td><td class="n">0<\/td><td class="n">0\.0%<\/td><\/tr>/);
    expect(html.match(/title="failed by its findings \(scoring.failOn\)">findings</g)).toHaveLength(24);
  });

  // highway-safety: safety violations that pass on C; quickstart: every fault profile, so verdicts of both kinds
  it.each([
    ['bench-configs/highway-safety.yaml', ['pass']],
    ['bench-configs/quickstart.yaml', ['fail', 'pass']],
  ])('failOn: [] reproduces the pure-score verdicts exactly on %s, conversation by conversation, and compare shows both rules', (config, pureVerdicts) => {
    const name = config.split('/').at(-1)!;
    const runs: Record<string, { summary: any; results: ConversationResult[]; outcomes: string[] }> = {};
    for (const [gate, failOn] of [
      ['pure', '[]'],
      ['gated', '[safety_violation]'],
    ]) {
      const out = join(dir, `${gate}-${name}`);
      const workspace = join(dir, `ws-${gate}`);
      const run = cli(['run', withFailOn(config, mkdtempSync(join(dir, 'cfg-')), failOn), '--out', out, '--workspace', workspace, '--no-progress']);
      expect(run.status, run.stderr).toBe(0);
      const summary = JSON.parse(readFileSync(join(out, 'summary.json'), 'utf8'));
      runs[gate] = { summary, ...stored(workspace, summary.run.id) };
    }
    const { pure, gated } = runs;
    // with failOn: [] the stored outcome of every conversation is the pre-gate rule's, and the summary counts exactly those
    expect(pure.results.every((r) => r.failOn?.length === 0)).toBe(true);
    expect(pure.outcomes).toEqual(pure.results.map(preGateOutcome));
    expect(pure.summary.perConversation.map((c: { outcome: string }) => c.outcome)).toEqual(pure.outcomes);
    expect([...new Set(pure.outcomes)].sort()).toEqual(pureVerdicts);
    expect(pure.summary.gate).toMatchObject({ failOn: [], failedByGate: 0 });
    // the same conversations ran under the default gate: their pure-score verdicts are unchanged, and are the gated run's `scoreOnly`
    expect(gated.results.map(preGateOutcome)).toEqual(pure.outcomes);
    expect(gated.summary.gate.scoreOnly).toEqual({ passed: pure.summary.passed, failed: pure.summary.failed, inconclusive: pure.summary.inconclusive, failRate: pure.summary.failRate });
    expect(gated.summary.failed).toBe(pure.summary.failed + gated.summary.gate.failedOnlyByGate);

    const compared = cli(['compare', join(dir, `gated-${name}`), join(dir, `pure-${name}`), '--json']);
    expect(compared.status, compared.stderr).toBe(0);
    const comparison = JSON.parse(compared.stdout);
    expect(comparison.a).toMatchObject({ failOn: ['safety_violation'], failedByGate: gated.summary.gate.failedByGate, scoreOnlyFailRate: pure.summary.failRate });
    expect(comparison.b).toMatchObject({ failOn: [], failedByGate: 0, failRate: pure.summary.failRate });
  }, 240_000);
});
