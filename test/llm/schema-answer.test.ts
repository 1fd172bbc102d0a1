import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { dimensionAnswerSchema, turnAnswerSchema } from '../../src/judge/answers.ts';
import { jsonSchemaFor } from '../../src/llm/structured.ts';
import { utteranceAnswerSchema } from '../../src/simulator/answers.ts';
import { benchModelResponder, type RecordedRequest } from '../helpers/fakeLlmServer.ts';
import { tokensOf } from '../helpers/modelHost.ts';
import { write } from '../helpers/schemaAnswer.ts';

/**
 * The fake model writes what its schema asks for (test/helpers/schemaAnswer.ts), as a grammar-constrained model does:
 * the same meaning costs fewer completion tokens under a tighter schema, and as much as before under the earlier one.
 */
const request = (step: string, schema: Record<string, unknown>) =>
  ({ api: 'openai', method: 'POST', path: '/v1/chat/completions', headers: {}, bytes: 0, body: { messages: [{ role: 'user', content: `${step}: …` }], response_format: { json_schema: { schema } } } }) as RecordedRequest;

// the turn verdict's schema of prompts/judge/turn-labels.v5 (before the compact answers)
const earlierTurn = z.object({
  labels: z.array(z.object({ label: z.string(), targetId: z.string().nullable(), evidence: z.string().max(1000) })).max(12),
  targetUpdates: z.array(z.object({ targetId: z.string(), status: z.number() })).default([]),
  reasoning: z.string().max(2000),
});

describe('the fake model fills in the requested schema', () => {
  const respond = benchModelResponder();

  it('the same verdict: the earlier schema gives the earlier answer, the compact one a seventh of its tokens', () => {
    const before = respond(request('EvaluateTurn', z.toJSONSchema(earlierTurn, { io: 'input' }) as Record<string, unknown>));
    expect(JSON.parse(before)).toEqual({ labels: [], targetUpdates: [{ targetId: 'g1', status: 1 }], reasoning: 'The reply lists Italian restaurants.' });
    const now = respond(request('EvaluateTurn', jsonSchemaFor(turnAnswerSchema(['g1']))));
    expect(JSON.parse(now)).toEqual({ done: ['g1'] });
    expect([tokensOf(before), tokensOf(now)]).toEqual([28, 4]);
    // and the answer reads as the same verdict
    expect(turnAnswerSchema(['g1']).parse(JSON.parse(now)).targetUpdates).toEqual([{ targetId: 'g1', status: 1 }]);
  });

  it('required fields always, optional ones only with something in them, strings cut at maxLength, anyOf by the meaning', () => {
    const schema = { type: 'object', properties: { a: { type: 'string', maxLength: 4 }, b: { type: 'array', items: { type: 'string' } }, c: { type: 'string' } }, required: ['c'] };
    expect(write(schema, { a: 'abcdefgh', b: [] })).toEqual({ a: 'abcd', c: '-' });
    const rubric = jsonSchemaFor(dimensionAnswerSchema());
    expect(write(rubric, { score: 2, why: 'fine' })).toEqual({ score: 2 });
    expect(write(rubric, { score: 1, why: 'turn 2' })).toEqual({ score: 1, why: 'turn 2' });
  });

  it("every bench step's answer under the current schemas is read by the bench", () => {
    const steps: Array<[string, z.ZodType]> = [
      ['GenerateUtterance', utteranceAnswerSchema(['g1'], null)],
      ['SelectAndGenerate', utteranceAnswerSchema(['g1'], ['safety_probe'])],
      ['EvaluateTurn', turnAnswerSchema(['g1'], { why: true, confidence: true })],
      ['EvaluateConversation', dimensionAnswerSchema({ why: true })],
    ];
    for (const [step, schema] of steps) expect(schema.safeParse(JSON.parse(respond(request(step, jsonSchemaFor(schema))))).success, step).toBe(true);
  });
});
