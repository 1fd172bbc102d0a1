import { describe, expect, it } from 'vitest';
import { runConversation } from '../../../src/kinds/dialogue/conversation.ts';
import type { ConversationResult } from '../../../src/domain/conversation.ts';
import type { FaultConfigInput } from '../../../src/headunit/reference/faults.ts';
import { InProcessHeadUnit } from '../../../src/headunit/in-process.ts';
import { ReferenceHeadUnit } from '../../../src/headunit/reference/reference-headunit.ts';
import { OracleJudge } from '../../../src/judge/oracle.ts';
import { ROUTE_RETURN_PHRASE } from '../../../src/simulator/phrases.ts';
import { TemplateSimulator, baselineSchedule } from '../../../src/simulator/template.ts';
import { routeMeets } from '../../../src/world/constraints.ts';
import { SEEDS, specFor } from './helpers.ts';

const ROUTE_SEEDS = SEEDS.filter((s) => s.requests.some((r) => r.intent === 'navigate' && r.constraints.length > 0));

async function run(count: number, mode: 'guided' | 'baseline', faults: FaultConfigInput | undefined, seeds = SEEDS, maxTurns = 10): Promise<ConversationResult[]> {
  const headUnit = new InProcessHeadUnit(new ReferenceHeadUnit({ faults }));
  const simulator = new TemplateSimulator();
  const results: ConversationResult[] = [];
  for (let i = 0; i < count; i++) {
    // specFor(k) places seed k % SEEDS.length in its city; stepping by SEEDS.length varies the district
    const spec = specFor(SEEDS.indexOf(seeds[i % seeds.length]) + SEEDS.length * Math.floor(i / seeds.length), mode, { key: `cov-${mode}-${i}`, maxTurns });
    results.push(await runConversation({ spec, openSession: (ctx) => headUnit.openSession(spec.key, ctx), simulator, judges: [new OracleJudge()] }));
  }
  return results;
}

/** Turns that return to a route after a topic switch, with the route preferences the user had stated. */
function routeReturns(results: ConversationResult[]) {
  return results.flatMap((r) =>
    r.turns.flatMap((turn) => {
      const target = turn.targetsAfter.find((t) => turn.utterance.annotation.returnsTo.includes(t.id));
      return target?.request.intent === 'navigate' ? [{ turn, preferences: target.request.constraints }] : [];
    }),
  );
}

describe('route context confusion: a return that does not restate the route preferences', () => {
  it('a unit that keeps the preferences passes; one that forgets them is labelled context_forgotten', async () => {
    const kept = routeReturns(await run(60, 'guided', undefined, ROUTE_SEEDS));
    expect(kept.length).toBeGreaterThanOrEqual(5);
    for (const { turn, preferences } of kept) {
      expect(turn.utterance.text).toContain(ROUTE_RETURN_PHRASE);
      expect(turn.utterance.text).not.toMatch(/toll|highway|arriv/i);
      expect(preferences.length).toBeGreaterThan(0);
      expect(turn.utterance.annotation.addedConstraints).toEqual({});
      const route = turn.reply!.actions.find((a) => a.type === 'route');
      expect(route && preferences.every((c) => routeMeets(route, c))).toBe(true);
      expect(turn.verdicts[0].labels).toEqual([]);
    }

    const forgetting = routeReturns(await run(200, 'guided', { profiles: ['forget_after_topic_switch'], rate: 1 }, ROUTE_SEEDS));
    // the fault shows only where a route breaking a remembered preference exists (tolls and highways come with longer trips)
    const fired = forgetting.filter(({ turn }) => turn.reply!.diagnostics?.faults.some((f) => f.profile === 'forget_after_topic_switch'));
    expect(fired.length).toBeGreaterThanOrEqual(3);
    for (const { turn } of fired) expect(turn.verdicts[0].labels.map((l) => l.label)).toContain('context_forgotten');
  });
});

describe('baseline users reach late turns', () => {
  it('spread a seed evenly: the first request at once, the last two turns before the end', () => {
    expect(baselineSchedule(1, 8)).toEqual([0]);
    expect(baselineSchedule(2, 8)).toEqual([0, 6]);
    expect(baselineSchedule(3, 8)).toEqual([0, 3, 6]);
    expect(baselineSchedule(3, 10)).toEqual([0, 4, 8]);
    expect(baselineSchedule(2, 2)).toEqual([0, 0]);
  });

  it('half the users with several requests pace them over the drive, the others say everything at once', async () => {
    const multi = SEEDS.filter((s) => s.requests.length > 1);
    const results = await run(60, 'baseline', undefined, multi, 8);
    const paced = results.filter((r) => r.turns[0].utterance.annotation.addresses.length === 1);
    const atOnce = results.filter((r) => r.turns[0].utterance.annotation.addresses.length === r.spec.seed.requests.length);
    expect(paced.length + atOnce.length).toBe(results.length);
    expect(paced.length).toBeGreaterThanOrEqual(15);
    expect(atOnce.length).toBeGreaterThanOrEqual(15);
    // the paced ones ask for their last request at turn 7 of 8, and nothing is left unasked
    for (const r of paced) {
      const lastTarget = `t${r.spec.seed.requests.length}`;
      expect(r.turns.findIndex((t) => t.utterance.annotation.addresses.includes(lastTarget))).toBe(6);
      expect(r.turns.length).toBeGreaterThanOrEqual(7);
    }
    // the unfaulted unit passes them all: pacing adds turns, not false alarms
    expect(results.every((r) => r.verdicts[0].pass === true)).toBe(true);
  });
});
