import { COVERAGE_MOVES, TURN_BANDS, type Coverage } from '../analysis/coverage.ts';
import type { RunSummary } from '../analysis/profile.ts';
import { DRIVING_STATES, DRIVING_STATE_TITLES, type DrivingState } from '../domain/safety-policy.ts';
import { escapeHtml as h } from './escape.ts';

const moveTitle = (move: string) => (move === 'none' ? 'no strategy (plain progress)' : move.replace(/_/g, ' '));

/**
 * The coverage table: one row per strategy and driving state the run had, one column per turn band;
 * empty cells are what was not tested.
 */
function coverageTable(coverage: Coverage, states: readonly DrivingState[]): string {
  const head = `<tr><th>strategy</th><th>driving state</th>${TURN_BANDS.map((b) => `<th class="n">turns ${b}</th>`).join('')}<th class="n">total</th></tr>`;
  const rows = COVERAGE_MOVES.flatMap((move) =>
    states.map((state, i) => {
      const cells = TURN_BANDS.map((band) => coverage.turns[move][band][state]);
      const total = cells.reduce((a, b) => a + b, 0);
      const td = (n: number) => `<td class="n${n === 0 ? ' muted' : ''}">${n === 0 ? '·' : n}</td>`;
      const first = i === 0 ? `<td rowspan="${states.length}"><b>${h(moveTitle(move))}</b></td>` : '';
      return `<tr>${first}<td>${h(DRIVING_STATE_TITLES[state])}</td>${cells.map(td).join('')}${td(total)}</tr>`;
    }),
  );
  return `<table class="coverage"><thead>${head}</thead><tbody>${rows.join('')}</tbody></table>`;
}

/** The report's "Coverage and safety policy" section, from summary.json's `coverage` and `safety`. */
export function coverageSectionHtml(summary: RunSummary): string {
  const parts: string[] = [];
  if (summary.safety) {
    const s = summary.safety;
    parts.push(`<p><b>Safety policy that judged: ${h(s.describe)}</b> (${h(s.title)}). ${h(s.rule)}. <span class="muted">Source: ${h(s.source)}.</span></p>`);
  }
  const coverage = summary.coverage;
  if (coverage) {
    const seen = DRIVING_STATES.filter((s) => coverage.drivingStates[s] > 0);
    const unseen = DRIVING_STATES.filter((s) => coverage.drivingStates[s] === 0);
    parts.push(
      `<p>Turns by driving state: ${seen.map((s) => `${h(DRIVING_STATE_TITLES[s])} ${coverage.drivingStates[s]}`).join(', ') || 'none'}.` +
        `${unseen.length ? ` No turn at all: ${unseen.map((s) => h(DRIVING_STATE_TITLES[s])).join(', ')}.` : ''}` +
        ` Returns after a topic switch: ${coverage.contextReturns.search} to a search, ${coverage.contextReturns.route} to a route.</p>`,
    );
    const gaps = coverage.gaps.map((g) => `${h(g.strategy.replace(/_/g, ' '))} — ${h(DRIVING_STATE_TITLES[g.drivingState])}`);
    parts.push(gaps.length ? `<p>Never met in this run (strategy — driving state): ${gaps.join('; ')}.</p>` : '<p class="muted">Every strategy used met every driving state of the run.</p>');
    if (seen.length) parts.push(coverageTable(coverage, seen));
    parts.push('<p class="note">Each turn counts once: by the strategy of its utterance, its turn number and the driving state the bench recorded for it. A dot is a situation this run did not test.</p>');
  }
  return parts.join('\n');
}
