import type { ConversationResult } from '../domain/conversation.ts';
import { listJudgeDisagreements, type JudgeDisagreement } from '../judge/agreement.ts';
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
  return {
    add(result: ConversationResult) {
      if (!result.turns.some((t) => t.verdicts.filter((v) => v.outcome === 'judged').length >= 2)) return;
      compared++;
      for (const d of listJudgeDisagreements(result)) {
        total++;
        const pair = `${d.judges[0]} vs ${d.judges[1]}`;
        perPair.set(pair, (perPair.get(pair) ?? 0) + 1);
        if (listed.length < limit) listed.push(d);
      }
    },
    finish: () => (compared === 0 ? null : disagreementSection(listed, perPair, total, compared)),
  };
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
