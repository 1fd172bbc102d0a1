import type { ConversationChange, RunChanges } from '../../analysis/changes.ts';
import type { RunComparison } from '../../analysis/compare.ts';
import { turnNumber } from '../../domain/conversation.ts';
import { findingsText, gateText } from './summary-text.ts';

const pct = (x: number | null) => (x === null ? 'n/a' : `${(x * 100).toFixed(1)}%`);
const num = (x: number | null, d = 3) => (x === null ? 'n/a' : x.toFixed(d));

/** What got fixed and what regressed between two stored runs, conversation by conversation. */
function changesLines(changes: RunChanges): string[] {
  const line = (c: ConversationChange) => `  ${c.key}: ${c.outcomeA} → ${c.outcomeB}; turns ${c.turns.map((t) => `${turnNumber(t.index)} [${t.labelsA.join(', ') || '–'} → ${t.labelsB.join(', ') || '–'}]`).join(', ') || 'none differ'}`;
  return [
    `builds: A ${changes.buildA ?? '(none recorded)'}, B ${changes.buildB ?? '(none recorded)'}`,
    `fixed (fail in A, pass in B): ${changes.fixed.length}`,
    ...changes.fixed.map(line),
    `regressed (pass in A, fail in B): ${changes.regressed.length}`,
    ...changes.regressed.map(line),
    ...(changes.otherChanges.length ? [`other changes: ${changes.otherChanges.map((c) => `${c.key} ${c.outcomeA} → ${c.outcomeB}`).join(', ')}`] : []),
    `unchanged: ${changes.unchanged.pass} passing, ${changes.unchanged.fail} failing, ${changes.unchanged.other} other${changes.onlyInA.length || changes.onlyInB.length ? `; only in A ${changes.onlyInA.length}, only in B ${changes.onlyInB.length}` : ''}`,
  ];
}

/** The failure diversity of both runs' failing conversations and of their conversations with findings. */
function diversityLines(comparison: RunComparison): string[] {
  const cov = (c: { mean: number; std: number }) => `${pct(c.mean)} ± ${pct(c.std)}`;
  return (
    [
      [comparison.diversity, 'failing conversations', 'failure clusters'],
      [comparison.findingsDiversity, 'conversations with findings', 'clusters of conversations with findings'],
    ] as const
  ).flatMap(([d, noun, clusters]) =>
    d
      ? [
          `unique ${noun}: A ${d.uniqueA}, B ${d.uniqueB}, ratio A/B ${num(d.uniqueRatio, 2)} (duplicates A ${pct(d.duplicateShareA)}, B ${pct(d.duplicateShareB)})`,
          `coverage of the union's ${clusters}: A ${cov(d.coverageA)}, B ${cov(d.coverageB)} (${d.embedder})`,
        ]
      : [`diversity of ${noun}: not compared (a summary has no section for it; rewrite it with \`icabench report <run id>\`)`],
  );
}

/** Two runs of conversations compared, as `icabench compare` prints them: rates, tests, pass^k, changes, diversity. */
export function comparisonLines(comparison: RunComparison): string[] {
  const sides = ([['A', comparison.a], ['B', comparison.b]] as const).map(
    ([side, run]) =>
      `${side} ${run.name}: ${run.conversations} conversations, fail rate ${pct(run.failRate)} (${gateText(run.failOn, run.failedByGate)}; by C alone ${pct(run.scoreOnlyFailRate)}), ${findingsText(run)}, ` +
      `mean C ${num(run.meanScore)}, unique failure types/conv ${num(run.uniqueFailureTypesPerConversation, 2)}, ≥ 3 failure types ${pct(run.threeOrMoreFailureTypes)}`,
  );
  const tests = ([['C scores', comparison.scores], ['unique failure types', comparison.uniqueFailureTypes]] as const).map(
    ([what, t]) => `${what}: Mann–Whitney U = ${num(t.u, 1)}, p = ${t.p === null ? 'n/a' : t.p.toExponential(2)} (${t.method ?? 'n/a'}), Â12 = ${num(t.a12)} (${t.magnitude ?? 'n/a'})${t.significant ? `, significant at α = ${comparison.alpha}` : ''}`,
  );
  const reliability = ([['A', comparison.reliability?.a], ['B', comparison.reliability?.b]] as const).flatMap(([side, rel]) =>
    rel ? [`${side} pass^k (unbiased) ${rel.byK.map((r) => `k=${r.k} ${pct(r.passHatK.unbiased)}`).join(', ')}; pass@k ${rel.byK.map((r) => `k=${r.k} ${pct(r.passAtK.unbiased)}`).join(', ')}`] : [],
  );
  return [
    ...sides,
    `unique failure types ratio A/B: ${num(comparison.uniqueFailureTypesRatio, 2)}`,
    ...tests,
    ...reliability,
    ...(comparison.changes ? changesLines(comparison.changes) : []),
    ...(comparison.unpaired ? [`fixed / regressed: not listed: ${comparison.unpaired}`] : []),
    ...diversityLines(comparison),
  ];
}
