import type { ConversationResult } from '../domain/conversation.ts';
import { listTierDisagreements, type TierDisagreement } from '../judge/llmAgreement.ts';
import { escapeHtml as h } from './escape.ts';
import type { ConversationCollector, ReportSection } from './html.ts';

/** Disagreements listed in the report; the rest are counted. */
export const DISAGREEMENT_LIMIT = 200;

/**
 * Turns where the oracle and an LLM judge tier both judged and labelled differently, for human
 * review. Both verdicts are kept in the store; this lists where they part.
 */
export function tierDisagreementSection(limit = DISAGREEMENT_LIMIT): ConversationCollector<ReportSection> {
  const listed: TierDisagreement[] = [];
  let total = 0;
  let compared = 0;
  return {
    add(result: ConversationResult) {
      if (!result.turns.some((t) => t.verdicts.some((v) => v.tier === 'llm'))) return;
      compared++;
      for (const d of listTierDisagreements(result)) {
        total++;
        if (listed.length < limit) listed.push(d);
      }
    },
    finish: () => (compared === 0 ? null : disagreementSection(listed, total, compared)),
  };
}

function disagreementSection(listed: readonly TierDisagreement[], total: number, compared: number): ReportSection {
  const rows = listed
    .map((d) => `<tr><td>${h(d.conversationKey)}</td><td>${d.turnIndex + 1}</td><td>${h(d.onlyFirst.join(', ') || '–')}</td><td>${h(d.onlySecond.join(', ') || '–')}</td><td>${h(d.userText)}</td><td>${h(d.replyText)}</td></tr>`)
    .join('');
  return {
    title: 'Judge tier disagreements',
    html:
      `<p>${total} turn(s) in ${compared} conversation(s) judged by both the oracle and the LLM tier got different labels${total > listed.length ? `; the first ${listed.length} are listed` : ''}. Review them by hand: neither tier is assumed right.</p>` +
      (rows ? `<table><thead><tr><th>conversation</th><th>turn</th><th>oracle only</th><th>LLM only</th><th>user</th><th>head unit</th></tr></thead><tbody>${rows}</tbody></table>` : ''),
  };
}
