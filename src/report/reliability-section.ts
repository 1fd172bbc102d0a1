import type { Reliability } from '../analysis/reliability.ts';
import { escapeHtml as h } from './escape.ts';

const pct = (x: number) => `${(x * 100).toFixed(1)}%`;

/** What an item of the estimator is in a report: a dialogue conversation plan or a tool-agent task. */
export type ReliabilityItem = 'plan' | 'task';

const PASSES: Record<ReliabilityItem, string> = {
  plan: 'A trial passes when its outcome is pass (fail, inconclusive and error do not).',
  task: 'A trial passes when R = 1 (every applicable scoring component passed).',
};

const note = (item: ReliabilityItem) =>
  `<p class="note">pass^k: all k trials of a ${item} pass; pass@k: at least one does. <b>unbiased</b>: the estimator from c passes of n trials ` +
  `(pass^k = C(c,k)/C(n,k), pass@k = 1 − C(n−c,k)/C(n,k)); <b>first k</b>: the first k trials as they ran. ${PASSES[item]} ` +
  `${item[0].toUpperCase()}${item.slice(1)}s with fewer than k trials are left out at k.</p>`;
const NOTE = note('plan');

/** The report's pass^k / pass@k table of one run (summary.json `reliability`), over dialogue plans or tool-agent tasks. */
export function reliabilityTableHtml(reliability: Reliability, item: ReliabilityItem = 'plan'): string {
  const rows = reliability.byK
    .map((r) => `<tr><td class="n">${r.k}</td><td class="n">${r.items}</td><td class="n">${pct(r.passHatK.unbiased)}</td><td class="n">${pct(r.passHatK.firstK)}</td><td class="n">${pct(r.passAtK.unbiased)}</td><td class="n">${pct(r.passAtK.firstK)}</td></tr>`)
    .join('');
  return `<p>${reliability.items} ${item}s, ${reliability.trials} trials (${reliability.minTrials}–${reliability.maxTrials} per ${item}).</p>
<table><thead><tr><th class="n">k</th><th class="n">${item}s</th><th class="n">pass^k unbiased</th><th class="n">pass^k first k</th><th class="n">pass@k unbiased</th><th class="n">pass@k first k</th></tr></thead><tbody>${rows}</tbody></table>${note(item)}`;
}

/** pass^k / pass@k of two runs side by side (unbiased estimator), for `icabench compare`. */
export function reliabilityComparisonHtml(a: Reliability | null, b: Reliability | null, names: { a: string; b: string }): string {
  const maxK = Math.max(a?.maxTrials ?? 0, b?.maxTrials ?? 0);
  const cell = (r: Reliability | null, k: number, which: 'passHatK' | 'passAtK') => {
    const row = r?.byK.find((x) => x.k === k);
    return `<td class="n">${row ? pct(row[which].unbiased) : '–'}</td>`;
  };
  const rows = Array.from({ length: maxK }, (_, i) => i + 1)
    .map((k) => `<tr><td class="n">${k}</td>${cell(a, k, 'passHatK')}${cell(b, k, 'passHatK')}${cell(a, k, 'passAtK')}${cell(b, k, 'passAtK')}</tr>`)
    .join('');
  return `<table><thead><tr><th class="n">k</th><th class="n">pass^k A: ${h(names.a)}</th><th class="n">pass^k B: ${h(names.b)}</th><th class="n">pass@k A</th><th class="n">pass@k B</th></tr></thead><tbody>${rows}</tbody></table>${NOTE}`;
}
