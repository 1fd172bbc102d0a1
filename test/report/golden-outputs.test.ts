import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { ConversationResult } from '../../src/domain/conversation.ts';
import { createRng } from '../../src/domain/rng.ts';
import { FAILURE_LABELS, STRATEGIES, type FailureLabel } from '../../src/domain/taxonomy.ts';
import { DRILL_DOWN_LIMIT } from '../../src/report/first-screen.ts';
import { chartJs } from '../../src/report/html.ts';
import { writeRunOutputs } from '../../src/report/write.ts';
import { ResultStore } from '../../src/store/store.ts';
import { conversationVerdict, result, spec, turnVerdict, type TurnPlan } from '../store/fixtures.ts';

/**
 * The report files of a fixed run, byte for byte as the report path wrote them before it streamed (test/report/golden/,
 * written by the in-memory writers and kept): a faster or leaner report path must write the same files. Only what
 * the fixture cannot fix is replaced before comparing: the run's random id, its creation and finish times, the
 * checkout's folder and the inlined Chart.js (a dependency's bytes). ICABENCH_UPDATE_GOLDEN=1 rewrites the files (review the diff).
 */
const GOLDEN = join(import.meta.dirname, 'golden');
/** the checkout, which the report names where it says which embedding model is missing */
const REPOSITORY = resolve(import.meta.dirname, '..', '..');
// past the drill-down limit, so both the detailed and the capped conversation rows are covered
const CONVERSATIONS = DRILL_DOWN_LIMIT + 12;

function fixtureRun(): ConversationResult[] {
  const rng = createRng(2026);
  return Array.from({ length: CONVERSATIONS }, (_, i) => {
    const key = `g${String(i).padStart(3, '0')}`;
    const turns: TurnPlan[] = Array.from({ length: 1 + rng.int(0, 1) }, () => {
      const labels: FailureLabel[] = rng.chance(0.35) ? [rng.pick(FAILURE_LABELS)] : [];
      if (rng.chance(0.1)) labels.push(rng.pick(FAILURE_LABELS));
      return {
        strategy: rng.chance(0.7) ? rng.pick(STRATEGIES) : null,
        labels: [...new Set(labels)],
        utterance: `Take me to ${rng.pick(['Schwabing', 'Giesing', 'Pasing'])} & avoid <tolls>, "please"`,
        reply: rng.chance(0.05) ? null : `Route set, ${rng.int(3, 40)} min`,
        ...(rng.chance(0.08) ? { oracleOutcome: 'inconclusive' as const } : {}),
        ...(rng.chance(0.15) ? { extra: [turnVerdict('llm', rng.chance(0.5) ? ['context_forgotten'] : [])] } : {}),
      };
    });
    const score = Math.round(rng.next() * 100) / 100;
    const errored = rng.chance(0.04);
    return result(key, turns, {
      score,
      spec: spec(key, { persona: rng.pick(['neutral', 'impatient', 'elderly']), seed: { id: `seed-${i % 9}`, text: 'x', requests: [{ intent: 'navigate', destination: 'Pasing', constraints: [] }] } }),
      startedAt: new Date(Date.UTC(2026, 2, 2, 18, 30) + i * 7_000).toISOString(),
      durationMs: 1_000 + rng.int(0, 9_000),
      ...(errored ? { status: 'sut_error' as const, error: 'head unit closed the socket' } : {}),
      ...(rng.chance(0.1) ? { verdicts: [conversationVerdict('oracle', score, score >= 0.75), conversationVerdict('llm', 0.5, false)] } : {}),
    });
  });
}

function normalized(text: string, runId: string, createdAt: string, finishedAt: string | null): string {
  let out = text.split(chartJs()).join('/* chart.js */').split(runId).join('RUN-ID').split(createdAt).join('CREATED-AT').split(REPOSITORY).join('REPOSITORY');
  if (finishedAt) out = out.split(finishedAt).join('FINISHED-AT');
  return out;
}

describe('the report files of a fixed run', () => {
  const dir = mkdtempSync(join(tmpdir(), 'icabench-golden-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('are the same bytes as the report path wrote before it streamed', async () => {
    const store = ResultStore.open(join(dir, 'icabench.db'));
    const conversations = fixtureRun();
    const runId = store.createRun({ name: 'golden <run> & co', mode: 'guided', config: { name: 'golden' }, plan: conversations.map((c) => c.spec) });
    for (const conversation of conversations) store.saveConversation(runId, conversation);
    store.setRunStatus(runId, 'completed');
    const out = join(dir, 'out');
    await writeRunOutputs(store, runId, out, { unit: 'the golden fixture unit', faults: null });
    const record = store.getRun(runId)!;
    store.close();
    const written = Object.fromEntries(readdirSync(out).sort().map((name) => [name, normalized(readFileSync(join(out, name), 'utf8'), runId, record.createdAt, record.finishedAt)]));
    expect(Object.keys(written)).toEqual(['conversations.csv', 'junit.xml', 'report.html', 'summary.json']);
    if (process.env.ICABENCH_UPDATE_GOLDEN === '1') {
      mkdirSync(GOLDEN, { recursive: true });
      for (const [name, text] of Object.entries(written)) writeFileSync(join(GOLDEN, name), text);
    }
    for (const [name, text] of Object.entries(written)) expect(text, name).toBe(readFileSync(join(GOLDEN, name), 'utf8'));
  }, 60_000);
});
