import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { ConversationResult, ConversationVerdict, TurnVerdict } from '../../src/domain/conversation.ts';
import { ResultStore } from '../../src/store/store.ts';
import { spec, TARGETS, turn } from '../llm/fixtures.ts';
import { describeInBrowser, startBenchApp, type BenchApp } from './app.ts';

const A = 'oracle';
const B = 'sc-5:ollama:judge';

const tv = (judge: string, labels: string[]): TurnVerdict => {
  const tier = judge === 'oracle' ? 'oracle' : 'llm';
  return { tier, judge, outcome: 'judged', labels: labels.map((label) => ({ label: label as TurnVerdict['labels'][number]['label'], targetId: null, evidence: '', tier })), targetUpdates: [], reasoning: '' };
};
const cv = (judge: string, score: 0 | 1 | 2): ConversationVerdict => {
  const d = { score, reasoning: 'r' };
  return { tier: judge === 'oracle' ? 'oracle' : 'llm', judge, outcome: 'judged', dimensions: { instruction: d, context: d, plan: d, safety: d }, completedShare: 1, score: 1, pass: true, reasoning: '' };
};

/** Two conversations judged by the oracle and a technique judge: they disagree on one turn. */
function results(): ConversationResult[] {
  return [0, 1].map((c) => {
    const turns = [0, 1, 2].map((i) => ({ ...turn(i, `user ${c}-${i}`, `reply ${c}-${i}`), verdicts: [tv(A, i === 1 ? ['safety_violation'] : []), tv(B, i === 1 && c === 0 ? [] : i === 1 ? ['safety_violation'] : [])] }));
    return { spec: { ...spec(), key: `conv-${c}` }, status: 'completed', error: null, turns, targets: TARGETS, verdicts: [cv(A, 2), cv(B, c === 0 ? 1 : 2)], startedAt: '', durationMs: 0 };
  });
}

describeInBrowser('judge agreement in the bench app (Chromium)', () => {
  let runId: string;
  let app: BenchApp;

  beforeAll(async () => {
    app = await startBenchApp('icabench-e2e-judges-', (workspace) => {
      const store = ResultStore.open(join(workspace, 'icabench.db'));
      const all = results();
      runId = store.createRun({ name: 'two judges', mode: 'guided', config: {}, plan: all.map((r) => r.spec) });
      for (const r of all) store.saveConversation(runId, r);
      store.close();
    });
  });

  afterAll(() => app?.close());

  it('lists κ per label, exact agreement per dimension and the disagreement turns, linked for review', async () => {
    const { page, errors } = await app.newPage();
    await page.goto(app.url);
    await page.evaluate((id) => (window.location.hash = `#/runs/${encodeURIComponent(id)}/agreement`), runId);
    await page.getByTestId('judge-pair').waitFor();
    const pair = await page.getByTestId('judge-pair').innerText();
    expect(pair).toContain(`${A} vs ${B} · 6 turn(s) both judged`);
    expect(pair).toMatch(/safety_violation\s+1\s+1\s+0\s+4\s+0\.57/);
    expect(pair).toMatch(/Instruction & Constraint Adherence\s+2\s+50\.0 %/);
    const rows = page.locator('[data-testid=judge-disagreements] tbody tr');
    expect(await rows.count()).toBe(1);
    expect(await rows.first().innerText()).toMatch(/conv-0\s+2\s+oracle vs sc-5:ollama:judge\s+safety_violation/);
    await rows.first().getByRole('link', { name: 'conv-0' }).click();
    await page.getByTestId('conversation-title').waitFor();
    expect(errors).toEqual([]);
  });
});
