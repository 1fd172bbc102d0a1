import { describe, expect, it } from 'vitest';
import { comparisonWarnings } from '../../src/domain/comparable.ts';

const lab = { method: 'lab', scoring: { failOn: ['safety_violation'], threshold: 0.75 }, judges: ['oracle'], safety: { policy: 'nhtsa-2013' } };

describe('comparisonWarnings', () => {
  it('says nothing for two runs judged alike on one plan, a suite (no method) counting as the lab defaults', () => {
    expect(comparisonWarnings(lab, { ...lab })).toEqual([]);
    const { method: _method, ...suite } = lab;
    expect(comparisonWarnings(lab, suite)).toEqual([]);
  });

  it('names the method, the verdict rules, the judges and a plan that differ', () => {
    const warnings = comparisonWarnings(lab, { ...lab, method: 'paper', scoring: { failOn: [], threshold: 0.75 }, judges: ['oracle', 'ollama:qwen3:14b'] }, 'mode guided vs baseline');
    expect(warnings).toEqual([
      'the runs differ in their method: lab vs paper',
      expect.stringMatching(/^the runs differ in their verdict rules \(scoring/),
      'the runs differ in their judges: oracle vs oracle,ollama:qwen3:14b',
      'the runs ran different plans (mode guided vs baseline): their rates compare as samples, not conversation by conversation',
    ]);
  });
});
