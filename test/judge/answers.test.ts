import { describe, expect, it } from 'vitest';
import { dimensionAnswerSchema, FULL_MARKS_REASONING, turnAnswerSchema } from '../../src/judge/answers.ts';
import { describeZodError } from '../../src/domain/validation.ts';
import { jsonSchemaFor } from '../../src/llm/structured.ts';

/** The model judge's compact answers (issue #37), the earlier shapes still read, and errors that name the field. */
const errorOf = (schema: { safeParse(v: unknown): { success: boolean; error?: any } }, value: unknown) => {
  const result = schema.safeParse(value);
  expect(result.success).toBe(false);
  return describeZodError(result.error);
};

describe('turn answers', () => {
  const schema = turnAnswerSchema(['g1', 'g2']);

  it('asks for the compact shape only: failures, done and dropped ids, no reasoning', () => {
    const wire = jsonSchemaFor(schema) as { properties: Record<string, unknown>; required?: string[] };
    expect(Object.keys(wire.properties)).toEqual(['fail', 'done', 'dropped']);
    expect(wire.required ?? []).toEqual([]);
    expect(JSON.stringify(wire)).toMatch(/"maxLength":160/);
  });

  it('reads a compact answer and the earlier shape of the same verdict as one value', () => {
    const compact = schema.parse({ fail: [{ code: 'constraint_missed', target: 'g1', quote: 'Burger Hut' }], done: ['g2'] });
    expect(compact).toEqual({
      labels: [{ label: 'constraint_missed', targetId: 'g1', evidence: 'Burger Hut' }],
      targetUpdates: [{ targetId: 'g2', status: 1 }],
      reasoning: 'labelled constraint_missed (evidence per label)',
    });
    const earlier = schema.parse({ labels: [{ label: 'constraint_missed', targetId: 'g1', evidence: 'Burger Hut' }], targetUpdates: [{ targetId: 'g2', status: 1 }], reasoning: 'cuisine broken' });
    expect({ ...earlier, reasoning: compact.reasoning }).toEqual(compact);
    // nothing failed, nothing resolved: the empty object
    expect(schema.parse({})).toEqual({ labels: [], targetUpdates: [], reasoning: 'no failure labelled' });
    expect(schema.parse({ dropped: ['g1'] }).targetUpdates).toEqual([{ targetId: 'g1', status: -1 }]);
  });

  it('names the compact field that is wrong, or the earlier one for an answer in the earlier shape', () => {
    expect(errorOf(schema, { fail: [{ code: 'request_omitted', target: null, quote: 'x' }] })).toMatch(/fail\.0\.target: request_omitted is a per-target label: target must be one of g1, g2/);
    expect(errorOf(schema, { fail: [{ code: 'safety_violation', target: 'g1', quote: 'x' }] })).toMatch(/fail\.0\.target: .*target must be null/);
    expect(errorOf(schema, { done: ['g7'] })).toMatch(/done: unknown target id "g7"/);
    expect(errorOf(schema, { fail: [{ code: 'rude', target: null, quote: 'x' }] })).toMatch(/fail\.0\.code/);
    expect(errorOf(schema, { fail: [{ code: 'planning_poor', target: null, quote: 'x'.repeat(161) }] })).toMatch(/fail\.0\.quote/);
    expect(errorOf(schema, { labels: [{ label: 'request_omitted', targetId: null, evidence: 'x' }], reasoning: 'r' })).toMatch(/labels\.0\.targetId: .*targetId must be one of/);
  });

  it('the reasoning techniques are asked for why first, ar also for a confidence', () => {
    const ar = turnAnswerSchema(['g1'], { why: true, confidence: true });
    expect(Object.keys((jsonSchemaFor(ar) as { properties: object }).properties)).toEqual(['why', 'fail', 'done', 'dropped', 'confidence']);
    expect(ar.parse({ why: 'fine', confidence: 0.9 })).toMatchObject({ reasoning: 'fine', confidence: 0.9, labels: [] });
    expect(errorOf(ar, { fail: [] , confidence: 0.9 })).toMatch(/why/);
  });
});

describe('rubric answers', () => {
  it('a reason only where points were taken off', () => {
    const schema = dimensionAnswerSchema();
    expect(schema.parse({ score: 2 })).toEqual({ score: 2, reasoning: FULL_MARKS_REASONING });
    expect(schema.parse({ score: 1, why: 'turn 3 forgot the cuisine' })).toEqual({ score: 1, reasoning: 'turn 3 forgot the cuisine' });
    expect(schema.safeParse({ score: 0 }).success).toBe(false);
    expect(schema.parse({ score: 0, reasoning: 'ignored everything' })).toEqual({ score: 0, reasoning: 'ignored everything' });
    expect(errorOf(schema, { score: 1, reasoning: '' })).toMatch(/reasoning/);
  });
});
