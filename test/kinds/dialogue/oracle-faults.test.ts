import { describe, expect, it } from 'vitest';
import { FAULT_PROFILES, FAULT_PROFILE_NAMES } from '../../../src/headunit/reference/faults.ts';
import { runMany } from './helpers.ts';

/**
 * Ground truth: the reference head unit logs which fault fired on which turn. The oracle
 * never reads that log; here we compare its labels against it.
 */
describe('oracle against the reference head unit fault profiles', () => {
  for (const profile of FAULT_PROFILE_NAMES) {
    it(`labels ${profile} as ${FAULT_PROFILES[profile]} on ≥95% of the turns where it fired`, async () => {
      // guided runs reach every situation but multi-request openings, which baseline users make
      const faults = { profiles: [profile], rate: 0.6, seed: 11 };
      const results = [...(await runMany(150, faults, 'guided')), ...(await runMany(60, faults, 'baseline'))];
      let fired = 0;
      let detected = 0;
      for (const turn of results.flatMap((r) => r.turns)) {
        if (!turn.reply?.diagnostics?.faults.some((f) => f.profile === profile)) continue;
        fired++;
        if (turn.verdicts[0].labels.some((l) => l.label === FAULT_PROFILES[profile])) detected++;
      }
      expect(fired).toBeGreaterThanOrEqual(10);
      expect(detected / fired).toBeGreaterThanOrEqual(0.95);
    });
  }

  it.each(['guided', 'baseline'] as const)('raises false alarms on under 5 percent of the turns of a fault-free head unit (%s)', async (mode) => {
    const results = await runMany(80, undefined, mode);
    const turns = results.flatMap((r) => r.turns);
    const alarmed = turns.filter((t) => t.verdicts[0].labels.length > 0);
    expect(turns.length).toBeGreaterThan(300);
    expect(results.every((r) => r.status === 'completed')).toBe(true);
    expect(alarmed.length / turns.length).toBeLessThan(0.05);
    // and the fault-free head unit completes what it is asked
    const scores = results.map((r) => r.verdicts[0].score ?? 0);
    expect(Math.min(...scores)).toBeGreaterThanOrEqual(0.75);
  });

  it('never reads the diagnostics: stripping them changes no verdict', async () => {
    const { OracleJudge } = await import('../../../src/judge/oracle.ts');
    const judge = new OracleJudge();
    const [result] = await runMany(1, { profiles: 'all', rate: 0.8, seed: 3 });
    for (const [i, turn] of result.turns.entries()) {
      const input = { spec: result.spec, history: result.turns.slice(0, i), utterance: turn.utterance, reply: { ...turn.reply!, diagnostics: undefined }, targets: i === 0 ? [] : result.turns[i - 1].targetsAfter, context: turn.context, turnIndex: i };
      const withDiag = await judge.evaluateTurn({ ...input, reply: turn.reply! });
      const without = await judge.evaluateTurn(input);
      expect(without.labels).toEqual(withDiag.labels);
    }
  });
});
