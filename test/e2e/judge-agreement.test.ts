import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ConversationResult, ConversationVerdict, TurnVerdict } from '../../src/domain/conversation.ts';
import { ResultStore } from '../../src/store/store.ts';
import { spec, TARGETS, turn } from '../llm/fixtures.ts';
import { browserGate, launchBrowser } from './browser.ts';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
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

function startServe(workspace: string): Promise<{ child: ChildProcess; url: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [join(ROOT, 'bin', 'icabench.js'), 'serve', '--workspace', workspace, '--port', '0'], { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    const timer = setTimeout(() => reject(new Error(`icabench serve printed no URL within 60 s:\n${out}`)), 60_000);
    const onData = (chunk: Buffer) => {
      out += chunk.toString();
      const match = /icabench bench app: (http:\/\/\S+)/.exec(out);
      if (match) {
        clearTimeout(timer);
        resolve({ child, url: match[1] });
      }
    };
    child.stdout!.on('data', onData);
    child.stderr!.on('data', onData);
    child.on('exit', (code) => reject(new Error(`icabench serve exited with ${code}:\n${out}`)));
  });
}

const gate = browserGate();
if (!gate.run) it('judge agreement in the bench app', (context) => context.skip(gate.reason));

describe.runIf(gate.run)('judge agreement in the bench app (Chromium)', () => {
  let workspace: string;
  let runId: string;
  let serve: { child: ChildProcess; url: string };
  let browser: Awaited<ReturnType<typeof launchBrowser>>;

  beforeAll(async () => {
    workspace = mkdtempSync(join(tmpdir(), 'icabench-e2e-judges-'));
    const store = ResultStore.open(join(workspace, 'icabench.db'));
    const all = results();
    runId = store.createRun({ name: 'two judges', mode: 'guided', config: {}, plan: all.map((r) => r.spec) });
    for (const r of all) store.saveConversation(runId, r);
    store.close();
    serve = await startServe(workspace);
    browser = await launchBrowser();
  });

  afterAll(async () => {
    await browser?.close();
    serve?.child.kill('SIGTERM');
    if (workspace) rmSync(workspace, { recursive: true, force: true });
  });

  it('lists κ per label, exact agreement per dimension and the disagreement turns, linked for review', async () => {
    const page = await browser.context.newPage();
    const errors: string[] = [];
    page.on('pageerror', (error) => errors.push(error.message));
    await page.goto(serve.url);
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
