import type { ConversationResult } from '../domain/conversation.ts';
import { judgeAgreementCollector, listJudgeDisagreements, type JudgeDisagreement, type JudgePairAgreement } from '../judge/agreement.ts';
import { DIMENSION_TITLES, DIMENSIONS, FAILURE_LABELS } from '../domain/taxonomy.ts';
import { escapeHtml as h } from './escape.ts';
import type { ConversationCollector, ReportSection } from './html.ts';

/** Disagreements listed in the report; the rest are counted. */
export const DISAGREEMENT_LIMIT = 200;

/**
 * Turns where two judges (any pair: the oracle and a model judge, two model judges) both judged and
 * labelled differently, for human review, with a count per pair. Every verdict is kept in the store;
 * this lists where they part.
 */
export function judgeDisagreementSection(limit = DISAGREEMENT_LIMIT): ConversationCollector<ReportSection> {
  const listed: JudgeDisagreement[] = [];
  const perPair = new Map<string, number>();
  let total = 0;
  let compared = 0;
  const agreement = judgeAgreementCollector();
  return {
    add(result: ConversationResult) {
      agreement.add(result);
      if (!result.turns.some((t) => t.verdicts.filter((v) => v.outcome === 'judged').length >= 2)) return;
      compared++;
      for (const d of listJudgeDisagreements(result)) {
        total++;
        const pair = `${d.judges[0]} vs ${d.judges[1]}`;
        perPair.set(pair, (perPair.get(pair) ?? 0) + 1);
        if (listed.length < limit) listed.push(d);
      }
    },
    finish: () => {
      const pairs = agreement.finish();
      if (compared === 0 && pairs.length === 0) return null;
      const section = disagreementSection(listed, perPair, total, compared);
      return { title: 'Judge agreement', html: agreementHtml(pairs) + `<h3>Judge disagreements</h3>${section.html}` };
    },
  };
}

const fixed = (x: number | null, digits = 2) => (x === null ? '–' : x.toFixed(digits));

/** Per pair of judges: Cohen's κ per failure label over the turns both judged, exact agreement and weighted κ per rubric dimension. */
function agreementHtml(pairs: readonly JudgePairAgreement[]): string {
  return pairs
    .map((p) => {
      const labelRows = FAILURE_LABELS.map((l) => {
        const c = p.labels[l];
        return `<tr><td>${h(l.replace(/_/g, ' '))}</td><td class="n">${c.both}</td><td class="n">${c.onlyFirst}</td><td class="n">${c.onlySecond}</td><td class="n">${c.neither}</td><td class="n">${fixed(c.kappa)}</td></tr>`;
      }).join('');
      const dimensionRows = DIMENSIONS.map((d) => {
        const c = p.dimensions[d];
        return `<tr><td>${h(DIMENSION_TITLES[d])}</td><td class="n">${c.items}</td><td class="n">${c.exact === null ? '–' : `${(c.exact * 100).toFixed(1)}%`}</td><td class="n">${fixed(c.kappa)}</td></tr>`;
      }).join('');
      return (
        `<h3>${h(p.judges[0])} vs ${h(p.judges[1])}</h3><p class="muted">${p.turns} turn(s) both judged. Per label: Cohen's κ of "gave the label on the turn" (yes/no). Per dimension: conversations both scored, exact agreement, quadratic-weighted κ.</p>` +
        `<div class="grid"><table><thead><tr><th>failure label</th><th class="n">both</th><th class="n">only ${h(p.judges[0])}</th><th class="n">only ${h(p.judges[1])}</th><th class="n">neither</th><th class="n">κ</th></tr></thead><tbody>${labelRows}</tbody></table>` +
        `<table><thead><tr><th>dimension</th><th class="n">items</th><th class="n">exact</th><th class="n">weighted κ</th></tr></thead><tbody>${dimensionRows}</tbody></table></div>`
      );
    })
    .join('');
}

function disagreementSection(listed: readonly JudgeDisagreement[], perPair: ReadonlyMap<string, number>, total: number, compared: number): ReportSection {
  const pairs = [...perPair].map(([pair, n]) => `${h(pair)}: ${n}`).join('; ');
  const rows = listed
    .map(
      (d) =>
        `<tr><td>${h(d.conversationKey)}</td><td>${d.turnIndex + 1}</td><td>${h(d.judges[0])}</td><td>${h(d.onlyFirst.join(', ') || '–')}</td><td>${h(d.judges[1])}</td><td>${h(d.onlySecond.join(', ') || '–')}</td><td>${h(d.userText)}</td><td>${h(d.replyText)}</td></tr>`,
    )
    .join('');
  return {
    title: 'Judge disagreements',
    html:
      `<p>${total} disagreement(s) between two judges that both judged a turn, in ${compared} conversation(s) with at least two judges${pairs ? ` (${pairs})` : ''}${total > listed.length ? `; the first ${listed.length} are listed` : ''}. Review them by hand: no judge is assumed right; the first in precedence order decided.</p>` +
      (rows
        ? `<table><thead><tr><th>conversation</th><th>turn</th><th>judge A</th><th>only A</th><th>judge B</th><th>only B</th><th>user</th><th>head unit</th></tr></thead><tbody>${rows}</tbody></table>`
        : ''),
  };
}
