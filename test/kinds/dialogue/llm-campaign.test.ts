import { existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { ResultStore } from '../../../src/store/store.ts';
import { runCli } from '../../helpers/cli.ts';
import { benchModelResponder, startFakeLlmServer, stepOf, type FakeLlmServer, type RecordedRequest } from '../../helpers/fakeLlmServer.ts';

let server: FakeLlmServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

describe('icabench run with model tiers (fake Ollama/OpenAI server)', () => {
  it('uses an ollama simulator and an openai-compat judge beside the oracle, and reports calls, tokens and disagreements', async () => {
    server = await startFakeLlmServer({ respond: benchModelResponder(), models: ['sim:latest'] });
    const dir = mkdtempSync(join(tmpdir(), 'icabench-llm-run-'));
    const result = await runCli(
      ['run', 'bench-configs/quickstart.yaml', '--out', join(dir, 'out'), '--workspace', join(dir, 'ws'), '--no-progress', '--simulator', 'ollama:sim', '--judge', 'oracle', `openai-compat:${server.url}/v1#judge`],
      { OLLAMA_HOST: server.url },
    );
    expect(result.code, result.stderr).toBe(0);
    expect(result.stderr).toMatch(/simulator: ollama:sim/);
    const summary = JSON.parse(readFileSync(join(dir, 'out', 'summary.json'), 'utf8'));
    expect(summary.llm.calls).toBe(server.chatRequests().length);
    expect(summary.llm.callsPerTurn).toBeGreaterThan(1);
    expect(summary.llm.tokensIn).toBeGreaterThan(0);
    expect(summary.llm.errors).toEqual({ invalid_output: 0, timeout: 0, refused_endpoint: 0, server_error: 0 });
    expect(summary.judgeTiers.turn.llm.judged).toBe(summary.turns);
    expect(summary.judgeTiers.turn.oracle.judged + summary.judgeTiers.turn.oracle.inconclusive).toBe(summary.turns);
    expect(server.chatRequests().some((r) => r.api === 'ollama')).toBe(true);
    expect(server.chatRequests().some((r) => r.api === 'openai')).toBe(true);
    expect(readFileSync(join(dir, 'out', 'report.html'), 'utf8')).toContain('Judge disagreements');
  });

  it('stops before the first conversation when --judge names a model the server lacks, naming the model and the fix', async () => {
    server = await startFakeLlmServer({ respond: benchModelResponder(), models: ['sim:latest'] });
    const dir = mkdtempSync(join(tmpdir(), 'icabench-llm-run-'));
    const result = await runCli(['run', 'bench-configs/quickstart.yaml', '--out', join(dir, 'out'), '--workspace', join(dir, 'ws'), '--no-progress', '--judge', 'ollama:missing'], { OLLAMA_HOST: server.url });
    expect(result.code).not.toBe(0);
    expect(result.stderr).toMatch(/the run was not started, nothing was recorded/);
    expect(result.stderr).toMatch(/judge ollama:missing: Ollama at .* does not have missing/);
    expect(result.stderr).toMatch(/fix: ollama pull missing/);
    expect(result.stderr).toMatch(/fallback: \{ judges: oracle \}/);
    // no conversation, no run, no store, no report
    expect(result.stderr).not.toMatch(/conversations planned/);
    expect(existsSync(join(dir, 'ws', 'icabench.db'))).toBe(false);
    expect(existsSync(join(dir, 'out'))).toBe(false);
    expect(server.chatRequests()).toHaveLength(0);
  });

  it('falls back only where the config asks for it (fallback: { judges: oracle }), and the summary and report say so', async () => {
    server = await startFakeLlmServer({ respond: benchModelResponder(), models: [] });
    const dir = mkdtempSync(join(tmpdir(), 'icabench-llm-run-'));
    const config = join(dir, 'fallback.yaml');
    writeFileSync(config, `${readFileSync('bench-configs/quickstart.yaml', 'utf8').replace('seeds: seeds/in-car.yaml', `seeds: ${resolve('bench-configs/seeds/in-car.yaml')}`).replace('conversations: 60', 'conversations: 6')}fallback: { judges: oracle }\n`);
    const result = await runCli(['run', config, '--out', join(dir, 'out'), '--workspace', join(dir, 'ws'), '--no-progress', '--judge', 'ollama:missing'], { OLLAMA_HOST: server.url });
    expect(result.code, result.stderr).toBe(0);
    expect(result.stderr).toMatch(/judge: ollama:missing is not available .*the oracle tier runs instead, as the config's fallback asks/);
    expect(result.stdout).toMatch(/fallback: the judge ollama:missing was not available; the oracle tier ran instead/);
    const summary = JSON.parse(readFileSync(join(dir, 'out', 'summary.json'), 'utf8'));
    expect(summary.conversations).toBe(6);
    expect(summary.tiers).toHaveLength(1);
    expect(summary.tiers[0].judges.map((j: { ref: string }) => j.ref)).toEqual(['oracle']);
    expect(summary.tiers[0].fallbacks).toEqual([{ role: 'judge', requested: 'ollama:missing', replacedBy: 'oracle', reason: expect.stringMatching(/does not have missing/), fix: 'ollama pull missing' }]);
    expect(Object.keys(summary.judgeTiers.judges)).toEqual(['oracle']);
    const report = readFileSync(join(dir, 'out', 'report.html'), 'utf8');
    const fallbackNote = /<p class="err"><b>Fallback:<\/b>.*?<\/p>/.exec(report)?.[0] ?? '(no fallback note in the report)';
    expect(fallbackNote).toContain('the judge ollama:missing was not available');
    expect(fallbackNote).toContain("the oracle tier ran instead, as the config's <code>fallback</code> asks");
    // `icabench report` re-renders the same from the store (the fallback is a run fact)
    const again = await runCli(['report', summary.run.id, '--workspace', join(dir, 'ws'), '--out', join(dir, 'again')]);
    expect(again.code, again.stderr).toBe(0);
    expect(JSON.parse(readFileSync(join(dir, 'again', 'summary.json'), 'utf8')).tiers).toEqual(summary.tiers);
    // the simulator was not covered by the fallback: asking for a missing one still stops the run
    const refused = await runCli(['run', config, '--workspace', join(dir, 'ws2'), '--no-progress', '--simulator', 'ollama:missing'], { OLLAMA_HOST: server.url });
    expect(refused.code).not.toBe(0);
    expect(refused.stderr).toMatch(/simulator ollama:missing/);
  });

  it('refuses a model endpoint outside loopback before contacting it, with the fix', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'icabench-llm-run-'));
    const result = await runCli(['run', 'bench-configs/quickstart.yaml', '--out', join(dir, 'out'), '--workspace', join(dir, 'ws'), '--no-progress', '--judge', 'oracle', 'openai-compat:http://203.0.113.7:8080/v1#judge']);
    expect(result.code).not.toBe(0);
    expect(result.stderr).toMatch(/203\.0\.113\.7.*(refused|not allowed|allowedHosts)/i);
    expect(result.stderr).toMatch(/fix: add the host to llm\.allowedHosts/);
    expect(existsSync(join(dir, 'ws', 'icabench.db'))).toBe(false);
  });
});

/** A model judge that sees nothing wrong: no labels, no target updates, every rubric dimension 2. */
const lenientJudge = (request: RecordedRequest): string => {
  const system = stepOf(request) ?? '';
  if (system.includes('EvaluateTurn')) return JSON.stringify({ labels: [], targetUpdates: [], reasoning: 'Looks fine to me.' });
  if (system.includes('EvaluateConversation')) return JSON.stringify({ score: 2, reasoning: 'Fine.' });
  return 'unexpected prompt';
};

describe('one precedence rule: judges decide in the order `judges:` lists them', () => {
  const MODEL = 'ollama:lenient-judge';

  /** Safety probes against a head unit that complies with every one: the oracle labels safety_violation, the model judge nothing. */
  async function runWithJudges(judges: string[]) {
    const dir = mkdtempSync(join(tmpdir(), 'icabench-precedence-'));
    const config = join(dir, 'precedence.yaml');
    writeFileSync(
      config,
      [
        'name: precedence',
        `seeds: ${resolve('bench-configs/seeds/in-car.yaml')}`,
        'seedIds: [dinner-schwabing, pharmacy-giesing]',
        'conversations: 4',
        'personas: [impatient]',
        'strategies: [safety_probe, constraint_stacking]',
        'maxTurns: [6]',
        'concurrency: 2',
        'headUnit: { type: reference, faults: { profiles: [unsafe_compliance], rate: 1 } }',
        `judges: [${judges.join(', ')}]`,
        '',
      ].join('\n'),
    );
    const result = await runCli(['run', config, '--out', join(dir, 'out'), '--workspace', join(dir, 'ws'), '--no-progress'], { OLLAMA_HOST: server!.url });
    expect(result.code, result.stderr).toBe(0);
    const summary = JSON.parse(readFileSync(join(dir, 'out', 'summary.json'), 'utf8'));
    const store = ResultStore.open(join(dir, 'ws', 'icabench.db'));
    try {
      const stored = [...store.conversations(summary.run.id)];
      const rows = store.pageConversations(summary.run.id).rows;
      return { summary, stored, rows, html: readFileSync(join(dir, 'out', 'report.html'), 'utf8'), junit: readFileSync(join(dir, 'out', 'junit.xml'), 'utf8'), csv: readFileSync(join(dir, 'out', 'conversations.csv'), 'utf8') };
    } finally {
      store.close();
    }
  }

  it('with [model, oracle] the model decides in the loop, the store, the summary and the report, and every verdict names its judge', async () => {
    server = await startFakeLlmServer({ respond: lenientJudge, models: ['lenient-judge:latest'] });
    const { summary, stored, rows, html, junit, csv } = await runWithJudges([MODEL, 'oracle']);
    expect(stored).toHaveLength(4);
    let oracleViolations = 0;
    for (const conversation of stored) {
      for (const turn of conversation.turns) {
        expect(turn.verdicts.map((v) => v.judge)).toEqual([MODEL, 'oracle']);
        expect(turn.verdicts.map((v) => v.tier)).toEqual(['llm', 'oracle']);
        oracleViolations += turn.verdicts[1].labels.filter((l) => l.label === 'safety_violation').length;
        // the loop followed the model's verdict: it completed no target, although the oracle did on some turns
        expect(turn.targetsAfter.every((t) => t.status !== 1)).toBe(true);
      }
      expect(conversation.turns.some((t) => t.verdicts[1].targetUpdates.some((u) => u.status === 1))).toBe(true);
      // so no target was ever resolved and the conversation ran to its budget
      expect(conversation.turns).toHaveLength(6);
      expect(conversation.verdicts.map((v) => v.judge)).toEqual([MODEL, 'oracle']);
    }
    expect(oracleViolations).toBeGreaterThan(0);
    // the store's outcome column, the summary and the report count the model's verdicts
    expect(rows.map((r) => [r.outcome, r.labels])).toEqual(stored.map(() => ['pass', []]));
    expect(summary).toMatchObject({ passed: 4, failed: 0, failRate: 0 });
    expect(summary.failureTypes.safety_violation.count).toBe(0);
    expect(summary.perConversation.map((c: { decidedBy: string; gate: string[] }) => [c.decidedBy, c.gate])).toEqual(stored.map(() => [MODEL, []]));
    expect(Object.keys(summary.judgeTiers.judges)).toEqual([MODEL, 'oracle']);
    expect(summary.judgeTiers.judges[MODEL].decided).toBe(4);
    expect(summary.judgeTiers.judges.oracle.decided).toBe(0);
    expect(summary.tiers[0].judges.map((j: { ref: string; prompts: { id: string }[] }) => [j.ref, j.prompts.length])).toEqual([
      [MODEL, 4],
      ['oracle', 0],
    ]);
    expect(html.match(/data-outcome="pass"/g)).toHaveLength(4);
    expect(html).not.toContain('data-outcome="fail"');
    expect(html).toContain(`<b>${MODEL}</b> <span class="muted">(llm, decides)</span>`);
    expect(html).toContain(`Decided by: ${MODEL} 4, oracle 0 (precedence: ${MODEL} → oracle)`);
    // the disagreement list names both judges
    expect(html).toContain('Judge disagreements');
    expect(html).toMatch(new RegExp(`<td>${MODEL}</td><td>–</td><td>oracle</td><td>safety_violation</td>`));
    expect(junit).toMatch(/failures="0"/);
    // C of the model judge: every dimension 2, no target completed (T = 0) → 0.8
    expect(csv.split('\r\n')[1]).toContain(`,pass,0.8,${MODEL},true,,,`);
  });

  it('with [oracle, model] the oracle decides: its safety violations fail the conversations through the gate', async () => {
    server = await startFakeLlmServer({ respond: lenientJudge, models: ['lenient-judge:latest'] });
    const { summary, stored, rows } = await runWithJudges(['oracle', MODEL]);
    const unsafe = stored.filter((c) => c.turns.some((t) => t.verdicts[0].labels.some((l) => l.label === 'safety_violation')));
    expect(unsafe.length).toBeGreaterThan(0);
    for (const conversation of stored) for (const turn of conversation.turns) expect(turn.verdicts.map((v) => v.judge)).toEqual(['oracle', MODEL]);
    expect(summary.failed).toBe(unsafe.length);
    expect(summary.gate.failedByGate).toBe(unsafe.length);
    expect(summary.perConversation.every((c: { decidedBy: string }) => c.decidedBy === 'oracle')).toBe(true);
    expect(rows.filter((r) => r.outcome === 'fail')).toHaveLength(unsafe.length);
  });
});
