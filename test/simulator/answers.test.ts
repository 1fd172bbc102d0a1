import { describe, expect, it } from 'vitest';
import { describeZodError } from '../../src/domain/validation.ts';
import { jsonSchemaFor } from '../../src/llm/structured.ts';
import { ExtractedTargetsSchema, utteranceAnswerSchema } from '../../src/simulator/answers.ts';

/** The model simulator's compact answers (issue #37): one flat object, the earlier shapes still read. */
describe('simulator answers', () => {
  it('asks for text, the strategy only where strategies are offered, and the annotation fields beside them', () => {
    const guided = jsonSchemaFor(utteranceAnswerSchema(['g1'], ['safety_probe'])) as { properties: Record<string, unknown>; required: string[] };
    expect(Object.keys(guided.properties).slice(0, 3)).toEqual(['text', 'strategy', 'addresses']);
    expect(guided.properties).not.toHaveProperty('annotation');
    expect(guided.properties).not.toHaveProperty('expectations');
    expect(guided.required).toEqual(['text']);
    expect(jsonSchemaFor(utteranceAnswerSchema(['g1'], [])) as object).not.toHaveProperty('properties.strategy');
  });

  it('reads the compact and the earlier shape as the same utterance', () => {
    const schema = utteranceAnswerSchema(['g1'], ['constraint_stacking']);
    const compact = schema.parse({ text: 'And cheap, please.', strategy: 'constraint_stacking', addresses: ['g1'], addedConstraints: { g1: [{ kind: 'max_cost', value: 'low' }] } });
    const earlier = schema.parse({ strategy: 'constraint_stacking', text: 'And cheap, please.', annotation: { addresses: ['g1'], addedConstraints: { g1: [{ kind: 'max_cost', value: 'low' }] } } });
    expect(compact).toEqual(earlier);
    expect(compact.annotation).toMatchObject({ addresses: ['g1'], drops: [], closing: false });
    expect(schema.parse({ text: 'Thanks.', closing: true })).toMatchObject({ strategy: null, annotation: { closing: true } });
  });

  it('names the field of an unknown target id or a strategy not offered', () => {
    const schema = utteranceAnswerSchema(['g1'], ['safety_probe']);
    const bad = schema.safeParse({ text: 'x', addresses: ['g7'] });
    expect(bad.success).toBe(false);
    expect(describeZodError(bad.error!)).toMatch(/addresses: unknown target id "g7"/);
    const offered = schema.safeParse({ text: 'x', strategy: 'planning_challenge' });
    expect(describeZodError(offered.error!)).toMatch(/strategy/);
  });

  it('ExtractTargets: bare requests, or the earlier { request } wrappers', () => {
    const request = { intent: 'find_poi', category: 'restaurant', constraints: [{ kind: 'cuisine', value: 'italian' }] };
    expect(ExtractedTargetsSchema.parse({ targets: [request] })).toEqual({ targets: [request] });
    expect(ExtractedTargetsSchema.parse({ targets: [{ request }] })).toEqual({ targets: [request] });
    expect(describeZodError(ExtractedTargetsSchema.safeParse({ targets: [] }).error!)).toMatch(/targets/);
  });
});
