import { describe, expect, it } from 'vitest';
import { runConversation } from '../../src/kinds/dialogue/conversation.ts';
import type { ConversationResult } from '../../src/domain/conversation.ts';
import { InProcessHeadUnit } from '../../src/headunit/in-process.ts';
import { ReferenceHeadUnit } from '../../src/headunit/reference/reference-headunit.ts';
import { OracleJudge } from '../../src/judge/oracle.ts';
import { driverSeesMet } from '../../src/simulator/reply-reading.ts';
import { TemplateSimulator } from '../../src/simulator/template.ts';
import type { AssistantReply } from '../../src/protocol/bridge.ts';
import { specFor } from '../kinds/dialogue/helpers.ts';

const WHEN = { date: '2026-05-12', time: '13:00' };
const reply = (actions: AssistantReply['actions']): AssistantReply => ({ sessionId: 's', turn: 0, text: 'ok', actions });

async function conversations(mode: 'guided' | 'baseline', method: 'lab' | 'paper', count: number, evaluatorFeedback = true): Promise<ConversationResult[]> {
  const headUnit = new InProcessHeadUnit(new ReferenceHeadUnit({}));
  const out: ConversationResult[] = [];
  for (let i = 0; i < count; i++) {
    const spec = specFor(i, mode, { maxTurns: 8 });
    out.push(await runConversation({ spec, openSession: (c) => headUnit.openSession(spec.key, c), simulator: new TemplateSimulator({ method }), judges: [new OracleJudge()], evaluatorFeedback }));
  }
  return out;
}

describe('what a driver reads in a reply', () => {
  it('a search is met by a result of its category whose claims meet the constraints, or by "not found"', () => {
    const search = { intent: 'find_poi' as const, category: 'restaurant' as const, constraints: [{ kind: 'min_rating' as const, value: 4 }] };
    const place = (rating: number) => ({ id: 'p', name: 'Trattoria', city: 'Munich', district: 'Schwabing', position: { lat: 48.16, lon: 11.58 }, category: 'restaurant' as const, rating });
    expect(driverSeesMet(search, reply([{ type: 'poi_results', category: 'restaurant', pois: [place(4.4)] }]), WHEN)).toBe(true);
    // "rated 3.9" is visibly below "at least 4"
    expect(driverSeesMet(search, reply([{ type: 'poi_results', category: 'restaurant', pois: [place(3.9)] }]), WHEN)).toBe(false);
    expect(driverSeesMet(search, reply([{ type: 'refusal', reason: 'not_found' }]), WHEN)).toBe(true);
    expect(driverSeesMet(search, reply([{ type: 'climate', setpointC: 22, zone: 'all' }]), WHEN)).toBe(false);
    expect(driverSeesMet({ intent: 'set_climate', setpointC: 22 }, reply([{ type: 'climate', setpointC: 21, zone: 'all' }]), WHEN)).toBe(false);
    expect(driverSeesMet({ intent: 'set_climate', setpointC: 22 }, null, WHEN)).toBe(false);
  });
});

describe('the paper baseline user sees that a request was met (no evaluator feedback)', () => {
  it('never asks again ("That\'s not what I asked") after a unit without faults met every request', async () => {
    const results = await conversations('baseline', 'paper', 12, false);
    const texts = results.flatMap((r) => r.turns.map((t) => t.utterance.text));
    expect(texts).toHaveLength(12 * 8);
    expect(texts.filter((t) => t.includes("That's not what I asked"))).toEqual([]);
    // and it did not drop what it got: no target ends dropped
    expect(results.flatMap((r) => r.targets).filter((t) => t.status === -1)).toEqual([]);
  });
});

describe('the guided user as Negi et al. publish it (method: paper)', () => {
  it('applies a strategy on every turn while Π has one within its consecutive limit, saying the next seed request in the same utterance', async () => {
    const results = await conversations('guided', 'paper', 12);
    for (const result of results) {
      result.turns.slice(1).forEach((turn, k) => {
        const previous = result.turns[k];
        // the only strategy-free turns: the driver's answer to the unit's clarification of an ambiguous name
        if (turn.utterance.strategy === null) expect(previous.utterance.strategy, turn.utterance.text).toBe('ambiguity_injection');
      });
      // every seed request gets asked (embedded with a strategy), none is left for plain progress
      const asked = new Set(result.turns.flatMap((t) => t.utterance.annotation.addresses));
      if (result.turns.length > result.spec.seed.requests.length) for (let k = 1; k <= result.spec.seed.requests.length; k++) expect(asked.has(`t${k}`)).toBe(true);
    }
  });

  it('has none of the lab\'s caps: a strategy the lab uses at most once (planning, ambiguity) comes back', async () => {
    const count = (results: ConversationResult[], strategy: string) => Math.max(...results.map((r) => r.turns.filter((t) => t.utterance.strategy === strategy).length));
    const paper = await conversations('guided', 'paper', 12);
    const lab = await conversations('guided', 'lab', 12);
    expect(count(lab, 'planning_challenge')).toBeLessThanOrEqual(1);
    expect(count(lab, 'ambiguity_injection')).toBeLessThanOrEqual(1);
    expect(Math.max(count(paper, 'planning_challenge'), count(paper, 'ambiguity_injection'))).toBeGreaterThan(1);
    // the lab makes plain progress between strategies; the paper's user does not
    const plain = (results: ConversationResult[]) => results.flatMap((r) => r.turns.slice(1)).filter((t) => t.utterance.strategy === null).length;
    expect(plain(lab)).toBeGreaterThan(plain(paper));
  });
});
