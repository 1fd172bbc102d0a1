import { describe, expect, it } from 'vitest';
import { runConversation } from '../../../src/kinds/dialogue/conversation.ts';
import type { ConversationSpec, SimulatedUtterance } from '../../../src/domain/conversation.ts';
import { UtteranceAnnotationSchema } from '../../../src/domain/conversation.ts';
import type { Request, Target } from '../../../src/domain/targets.ts';
import type { AssistantReply } from '../../../src/protocol/bridge.ts';
import type { HeadUnitSession } from '../../../src/headunit/types.ts';
import { OracleJudge } from '../../../src/judge/oracle.ts';
import type { UserSimulator } from '../../../src/simulator/types.ts';
import { specFor } from './helpers.ts';

const CLIMATE: Request = { intent: 'set_climate', setpointC: 22 };
const RADIO: Request = { intent: 'play_media', source: 'radio', item: 'Bayern 3' };

const say = (text: string, annotation: Partial<Parameters<typeof UtteranceAnnotationSchema.parse>[0]>): SimulatedUtterance => ({ text, strategy: null, annotation: UtteranceAnnotationSchema.parse(annotation) });

/** A user with two requests who asks for both, then says `second` (e.g. "never mind both"), then stops. */
function twoRequestUser(second: SimulatedUtterance): UserSimulator {
  return {
    kind: 'template',
    describe: 'two requests',
    prompts: [],
    startConversation: () => {
      let turn = 0;
      return {
        extractTargets: async (): Promise<Target[]> => [
          { id: 't1', request: CLIMATE, status: 0, introducedTurn: null, completedTurn: null },
          { id: 't2', request: RADIO, status: 0, introducedTurn: null, completedTurn: null },
        ],
        openingUtterance: async () => say('Set the temperature to 22 degrees. Also, play Bayern 3 on the radio.', { addresses: ['t1', 't2'] }),
        nextUtterance: async () => (turn++ === 0 ? second : null),
      };
    },
  };
}

/** A unit that sets the climate and ignores everything else. */
const climateOnly = async (): Promise<HeadUnitSession> => ({
  sessionId: 's',
  send: async (turn): Promise<AssistantReply> => ({ sessionId: 's', turn, text: turn === 0 ? 'Climate set to 22 degrees.' : 'Okay.', actions: turn === 0 ? [{ type: 'climate', setpointC: 22, zone: 'all' }] : [] }),
  close: async () => undefined,
});

async function converse(second: SimulatedUtterance) {
  const spec: ConversationSpec = { ...specFor(0, 'baseline'), maxTurns: 4 };
  return runConversation({ spec, openSession: climateOnly, simulator: twoRequestUser(second), judges: [new OracleJudge()] });
}

describe('T of Negi et al. over a whole conversation: σ ∈ {-1, 0, 1}, T = |{σ = 1}| / |G|', () => {
  it('a drop after a completion leaves the completed target completed; the open one is dropped and counts against T', async () => {
    // turn 0: the climate is set (t1 completed), the radio ignored (t2 open, request_omitted); turn 1: "never mind both"
    const result = await converse(say('Never mind all that.', { drops: ['t1', 't2'] }));
    expect(result.targets.map((t) => [t.id, t.status])).toEqual([
      ['t1', 1],
      ['t2', -1],
    ]);
    expect(result.targets[0].completedTurn).toBe(0);
    const [verdict] = result.verdicts;
    // T = 1/2; d = (instruction 1: one request_omitted, context 2, plan 2, safety 2); C = (1/2 + 1/2 + 1 + 1 + 1) / 5 = 0.8
    expect(verdict.completedShare).toBe(0.5);
    expect(verdict.dimensions.instruction?.score).toBe(1);
    expect(verdict.score).toBeCloseTo(0.8, 12);
  });

  it('every target dropped before it was met: T = 0', async () => {
    const result = await runConversation({
      spec: { ...specFor(0, 'baseline'), maxTurns: 4 },
      openSession: async () => ({ sessionId: 's', send: async (turn) => ({ sessionId: 's', turn, text: 'Sorry, I cannot help with that.', actions: [] }), close: async () => undefined }),
      simulator: twoRequestUser(say('Never mind all that.', { drops: ['t1', 't2'] })),
      judges: [new OracleJudge()],
    });
    expect(result.targets.map((t) => t.status)).toEqual([-1, -1]);
    expect(result.verdicts[0].completedShare).toBe(0);
  });
});
