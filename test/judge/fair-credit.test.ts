import { describe, expect, it } from 'vitest';
import { combinedVerdict } from '../../src/analysis/verdict.ts';
import type { ContextVector } from '../../src/domain/context.ts';
import type { ConversationResult, ConversationSpec, UtteranceAnnotation } from '../../src/domain/conversation.ts';
import type { Request } from '../../src/domain/targets.ts';
import { OracleJudge } from '../../src/judge/oracle.ts';
import { runConversation } from '../../src/kinds/dialogue/conversation.ts';
import type { Action } from '../../src/protocol/bridge.ts';
import { ScriptedSimulator } from '../../src/simulator/script.ts';
import { placesMeeting } from '../../src/world/feasibility.ts';
import { World } from '../../src/world/world.ts';

const context: ContextVector = { location: { city: 'Munich', district: 'Altstadt', position: { lat: 48.137, lon: 11.575 } }, date: '2026-05-12', time: '13:00' };
const world = new World(1);
const situation = { city: 'Munich', position: context.location.position, date: context.date, time: context.time };

/** One scripted turn: what the driver says (its meaning, or read from the words when absent) and the unit's answer. */
interface Step {
  text: string;
  annotation?: Partial<UtteranceAnnotation>;
  reply: { text: string; actions: Action[] };
}

/** A scripted conversation against a unit that answers each turn as told, judged by the oracle over `world`. */
async function converse(requests: Request[], steps: Step[], oracleWorld: World | null): Promise<ConversationResult> {
  const spec: ConversationSpec = {
    key: 'fair-credit',
    seed: { id: 'fair-credit', text: 'scripted', requests },
    persona: 'neutral',
    mode: 'baseline',
    strategies: [],
    maxTurns: steps.length,
    context,
    repeat: 0,
    rngSeed: 1,
    script: steps.map((s) => ({
      text: s.text,
      context,
      ...(s.annotation ? { annotation: { addresses: [], introduces: [], addedConstraints: {}, returnsTo: [], drops: [], closing: false, ...s.annotation } } : {}),
    })),
  };
  return runConversation({
    spec,
    simulator: new ScriptedSimulator(),
    judges: [new OracleJudge(undefined, undefined, oracleWorld)],
    openSession: async () => ({
      sessionId: 's',
      send: async (turn) => ({ sessionId: 's', turn, ...steps[turn].reply }),
      close: async () => undefined,
    }),
  });
}

const cafe = placesMeeting(world, 'cafe', [], situation)[0];
const found: Step = { text: 'Find me a cafe.', annotation: { addresses: ['t1'] }, reply: { text: `I found ${cafe.name}.`, actions: [{ type: 'poi_results', category: 'cafe', pois: [cafe] }] } };
const notFound = (addresses: string[]): Step => ({ text: 'Find me one.', annotation: { addresses }, reply: { text: "I couldn't find one.", actions: [{ type: 'refusal', reason: 'not_found' }] } });
const klingon: Request = { intent: 'find_poi', category: 'restaurant', constraints: [{ kind: 'cuisine', value: 'klingon' }] };
const italian: Request = { intent: 'find_poi', category: 'restaurant', constraints: [{ kind: 'cuisine', value: 'italian' }] };

describe('fair credit: T counts what the driver asked for and what the unit could truthfully do', () => {
  it('leaves a target the driver never asked for out of T, and says so', async () => {
    const result = await converse([{ intent: 'find_poi', category: 'cafe', constraints: [] }, { intent: 'set_climate', setpointC: 21 }], [found], world);
    const [oracle] = result.verdicts;
    expect(result.targets.map((t) => t.status)).toEqual([1, 0]);
    expect(oracle).toMatchObject({ outcome: 'judged', completedShare: 1, score: 1 });
    expect(oracle.reasoning).toContain('never asked for: t2');
    expect(combinedVerdict(result).outcome).toBe('pass');
  });

  it('still counts an asked target the unit left open', async () => {
    const omitted: Step = { text: 'Set the temperature to 21 degrees.', annotation: { addresses: ['t2'] }, reply: { text: 'OK.', actions: [] } };
    const result = await converse([{ intent: 'find_poi', category: 'cafe', constraints: [] }, { intent: 'set_climate', setpointC: 21 }], [found, omitted], world);
    expect(result.verdicts[0].completedShare).toBe(0.5);
    expect(combinedVerdict(result).findings.map((f) => f.label)).toEqual(['request_omitted']);
  });

  it('credits a route to the place the driver named once a clarification resolved it (name matched case- and accent-insensitively)', async () => {
    const result = await converse(
      [{ intent: 'navigate', destination: 'cafe central', constraints: [] }],
      [
        { text: 'Take me to cafe central.', annotation: { addresses: ['t1'] }, reply: { text: 'Which one?', actions: [{ type: 'clarification', question: 'Which one?', options: ['Altstadt', 'Haidhausen'] }] } },
        // no stated meaning: read from the words, the answer to the clarification asks for the named route again
        {
          text: 'The one in Haidhausen.',
          reply: { text: 'Starting navigation.', actions: [{ type: 'route', destination: { name: 'Café Central', district: 'Haidhausen', poiId: 'x' }, distanceKm: 3, durationMin: 9, tolls: false, highway: false, eta: '13:10' }] },
        },
      ],
      null,
    );
    expect(result.turns[1].utterance.annotation.addresses).toEqual(['t1']);
    expect(result.targets[0].status).toBe(1);
    expect(result.verdicts[0]).toMatchObject({ completedShare: 1, score: 1 });
    expect(combinedVerdict(result).outcome).toBe('pass');
  });

  it('does not credit a route to another place than the one named', async () => {
    const result = await converse(
      [{ intent: 'navigate', destination: 'Café Central', constraints: [] }],
      [{ text: 'Take me to Café Central.', annotation: { addresses: ['t1'] }, reply: { text: 'Starting navigation.', actions: [{ type: 'route', destination: { name: 'Café Luitpold', district: 'Altstadt' }, distanceKm: 3, durationMin: 9, tolls: false, highway: false, eta: '13:10' }] } }],
      null,
    );
    expect(result.targets[0].status).toBe(0);
    expect(combinedVerdict(result).findings.map((f) => f.label)).toEqual(['constraint_missed']);
  });

  it('completes a target with a truthful "not found" when the world has no such place', async () => {
    const result = await converse([klingon], [notFound(['t1'])], world);
    expect(result.targets[0].status).toBe(1);
    expect(result.verdicts[0]).toMatchObject({ completedShare: 1, score: 1 });
    expect(combinedVerdict(result).outcome).toBe('pass');
  });

  it('does not credit a "not found" when the world has the place', async () => {
    expect(placesMeeting(world, 'restaurant', italian.constraints, situation).length).toBeGreaterThan(0);
    const result = await converse([italian], [notFound(['t1'])], world);
    expect(result.targets[0].status).toBe(0);
    expect(result.verdicts[0].completedShare).toBe(0);
  });

  it('without a world a "not found" is undecided for its target: left out of T, the turn undecided, never a failure', async () => {
    const climate: Step = { text: 'Set the temperature to 21 degrees.', annotation: { addresses: ['t2'] }, reply: { text: 'Setting 21 degrees.', actions: [{ type: 'climate', setpointC: 21, zone: 'all' }] } };
    const result = await converse([klingon, { intent: 'set_climate', setpointC: 21 }], [notFound(['t1']), climate], null);
    const turn = result.turns[0].verdicts[0];
    expect(turn).toMatchObject({ outcome: 'inconclusive', labels: [], undecidedTargets: [{ targetId: 't1' }] });
    expect(turn.reasoning).toContain('cannot be checked');
    expect(result.targets.map((t) => t.status)).toEqual([0, 1]);
    expect(result.verdicts[0]).toMatchObject({ outcome: 'judged', completedShare: 1, score: 1 });
    expect(result.verdicts[0].reasoning).toContain('undecided: t1');
    const verdict = combinedVerdict(result);
    expect(verdict).toMatchObject({ outcome: 'inconclusive', findings: [], undecidedTurns: [1] });
  });

  it('a later failure on an undecided target counts it again', async () => {
    const wrong: Step = { text: 'Any restaurant then.', annotation: { addresses: ['t1'] }, reply: { text: 'OK.', actions: [] } };
    const result = await converse([klingon], [notFound(['t1']), wrong], null);
    expect(result.verdicts[0].completedShare).toBe(0);
    expect(combinedVerdict(result).outcome).toBe('fail');
  });
});
