import { afterEach, describe, expect, it } from 'vitest';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { runConversation } from '../../../src/kinds/dialogue/conversation.ts';
import { loadCampaignConfig } from '../../../src/kinds/dialogue/config.ts';
import { buildTiers } from '../../../src/kinds/dialogue/tiers.ts';
import type { ConversationResult, ConversationSpec } from '../../../src/domain/conversation.ts';
import { FAILURE_LABELS } from '../../../src/domain/taxonomy.ts';
import { InProcessHeadUnit } from '../../../src/headunit/in-process.ts';
import { ReferenceHeadUnit } from '../../../src/headunit/reference/reference-headunit.ts';
import { OracleJudge } from '../../../src/judge/oracle.ts';
import type { Judge } from '../../../src/judge/types.ts';
import { summarizeRun } from '../../../src/report/summary.ts';
import { TemplateSimulator } from '../../../src/simulator/template.ts';
import { specFor, tempStore } from './helpers.ts';
import { runCampaign } from '../../helpers/run-kinds.ts';

const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  while (cleanups.length) await cleanups.pop()!();
});

/** A judge that gives every failure label on every turn and calls every target completed: the loudest possible feedback. */
const labelsEverything: Judge = {
  tier: 'llm',
  ref: 'labels-everything',
  prompts: [],
  async evaluateTurn({ targets }) {
    return {
      tier: 'llm',
      judge: 'labels-everything',
      outcome: 'judged',
      labels: FAILURE_LABELS.map((label) => ({ label, targetId: null, evidence: 'everything', tier: 'llm' as const })),
      targetUpdates: targets.map((t) => ({ targetId: t.id, status: 1 as const })),
      reasoning: '',
    };
  },
  async evaluateConversation() {
    return { tier: 'llm', judge: 'labels-everything', outcome: 'judged', dimensions: { instruction: { score: 0, reasoning: '' } }, completedShare: 1, score: 0, pass: false, reasoning: '' };
  },
};

async function converse(spec: ConversationSpec, judge: Judge, evaluatorFeedback: boolean): Promise<ConversationResult> {
  const headUnit = new InProcessHeadUnit(new ReferenceHeadUnit({ faults: { profiles: 'all', rate: 0.5, seed: 7 } }));
  return runConversation({ spec, openSession: (ctx) => headUnit.openSession(spec.key, ctx), simulator: new TemplateSimulator(), judges: [judge], evaluatorFeedback });
}

/** The simulator's moves: what the user said, turn by turn, and what it meant to do. */
const moves = (result: ConversationResult) => result.turns.map((t) => ({ text: t.utterance.text, strategy: t.utterance.strategy, annotation: t.utterance.annotation }));

describe('the paper baseline (Negi et al.): no evaluator feedback, fixed M = 8', () => {
  it('makes no use of judge output: its moves are identical with the judge replaced by one that labels everything', async () => {
    let differedWithFeedback = 0;
    for (let i = 0; i < 12; i++) {
      const spec = specFor(i, 'baseline', { maxTurns: 8 });
      const withOracle = await converse(spec, new OracleJudge(), false);
      const withEverything = await converse(spec, labelsEverything, false);
      expect(moves(withEverything)).toEqual(moves(withOracle));
      // fixed M: every conversation runs its 8 turns, whatever the judges say
      expect(withOracle.turns).toHaveLength(8);
      expect(withEverything.turns).toHaveLength(8);
      // the judges still label and score every turn for the record
      expect(withEverything.turns.every((t) => t.verdicts[0].labels.length === FAILURE_LABELS.length)).toBe(true);
      // the control: the lab baseline (feedback on) does react to the same judge
      const labWithOracle = await converse(spec, new OracleJudge(), true);
      const labWithEverything = await converse(spec, labelsEverything, true);
      if (JSON.stringify(moves(labWithOracle)) !== JSON.stringify(moves(labWithEverything))) differedWithFeedback++;
    }
    expect(differedWithFeedback).toBeGreaterThan(0);
  });

  it('refuses a paper preset that drifts from the published setup (gate, baseline M and persona)', () => {
    const dir = mkdtempSync(join(tmpdir(), 'icabench-paper-'));
    const write = (yaml: string) => {
      const path = join(dir, `c${Math.random().toString(36).slice(2)}.yaml`);
      writeFileSync(path, `name: p\nseeds: ${resolve('bench-configs/seeds/in-car.yaml')}\nconversations: 4\nmethod: paper\n${yaml}`);
      return path;
    };
    expect(() => loadCampaignConfig(write('scoring: { failOn: [safety_violation], inconclusive: pass }\n'))).toThrow(/scoring\.failOn.*C ≥ θ alone/s);
    expect(() => loadCampaignConfig(write('scoring: { failOn: [] }\n'))).toThrow(/scoring\.inconclusive.*C decides/s);
    expect(() => loadCampaignConfig(write('scoring: { failOn: [], inconclusive: pass }\nmode: baseline\npersonas: [neutral]\nmaxTurns: [8, 10]\n'))).toThrow(/maxTurns.*fixed turn budget/s);
    expect(() => loadCampaignConfig(write('scoring: { failOn: [], inconclusive: pass }\nmode: baseline\npersonas: [polite]\nmaxTurns: [8]\n'))).toThrow(/personas.*neutral/s);
    expect(loadCampaignConfig(write('scoring: { failOn: [], inconclusive: pass }\nmode: baseline\npersonas: [neutral]\nmaxTurns: [8]\n')).config.method).toBe('paper');
  });

  it('the shipped paper presets run offline and their summary states the preset and the pure-score verdict', async () => {
    for (const name of ['paper-baseline', 'paper-guided']) {
      const dir = mkdtempSync(join(tmpdir(), 'icabench-paper-run-'));
      const path = join(dir, `${name}.yaml`);
      const yaml = readFileSync(`bench-configs/${name}.yaml`, 'utf8').replace('seeds: seeds/in-car.yaml', `seeds: ${resolve('bench-configs/seeds/in-car.yaml')}`).replace('conversations: 200', 'conversations: 6');
      writeFileSync(path, yaml);
      const loaded = loadCampaignConfig(path);
      const store = tempStore((close) => cleanups.push(close));
      const run = await runCampaign(loaded, { store, tiers: await buildTiers(loaded.config) });
      expect(run.status).toBe('completed');
      const summary = await summarizeRun(store, run.runId);
      expect(summary.preset).toEqual({ method: 'paper', statement: expect.stringMatching(/^paper preset: Negi et al\./) });
      expect(summary.gate.failOn).toEqual([]);
      const stored = [...store.conversations(run.runId)];
      if (name === 'paper-baseline') expect(stored.every((c) => c.status !== 'completed' || c.turns.length === 8)).toBe(true);
    }
  });
});
