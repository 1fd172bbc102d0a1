import type { ConversationSpec, TurnRecord } from '../../src/domain/conversation.ts';
import type { Target } from '../../src/domain/targets.ts';
import { STRATEGIES } from '../../src/domain/taxonomy.ts';

export const CONTEXT = { location: { city: 'Munich', district: 'Schwabing', position: { lat: 48.16, lon: 11.58 } }, date: '2026-05-12', time: '13:00' };

export function spec(overrides: Partial<ConversationSpec> = {}): ConversationSpec {
  return {
    key: 'llm-test-0',
    seed: {
      id: 'italian-lunch',
      text: 'I want Italian food for lunch, not too expensive',
      city: 'Munich',
      requests: [{ intent: 'find_poi', category: 'restaurant', constraints: [{ kind: 'cuisine', value: 'italian' }] }],
    },
    persona: 'impatient',
    mode: 'guided',
    strategies: [...STRATEGIES],
    maxTurns: 8,
    context: CONTEXT,
    repeat: 0,
    rngSeed: 4242,
    ...overrides,
  };
}

export const TARGETS: Target[] = [
  { id: 'g1', request: { intent: 'find_poi', category: 'restaurant', constraints: [{ kind: 'cuisine', value: 'italian' }, { kind: 'max_cost', value: 'medium' }] }, status: 0, introducedTurn: 0, completedTurn: null },
  { id: 'g2', request: { intent: 'navigate', destination: 'poi', constraints: [{ kind: 'avoid_tolls' }] }, status: 0, introducedTurn: null, completedTurn: null },
];

export function turn(index: number, userText: string, replyText: string): TurnRecord {
  return {
    index,
    utterance: { text: userText, strategy: null, annotation: { addresses: ['g1'], introduces: [], addedConstraints: {}, returnsTo: [], drops: [], closing: false } },
    context: CONTEXT,
    reply: { sessionId: 's', turn: index, text: replyText, actions: [] },
    latencyMs: 5,
    verdicts: [],
    targetsAfter: TARGETS,
  };
}
