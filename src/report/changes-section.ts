import { pairedRunChanges, type ConversationChange, type ReplyDiffPart, type RunChanges } from '../analysis/changes.ts';
import { unitBuildOf } from '../run/run-facts.ts';
import type { ResultStore } from '../store/store.ts';
import { escapeHtml as h } from './escape.ts';
import type { ReportSection } from './html.ts';
import { turnNumber } from '../domain/conversation.ts';

function diffHtml(parts: readonly ReplyDiffPart[]): string {
  return parts.map((p) => (p.op === 'same' ? h(p.text) : p.op === 'removed' ? `<del>${h(p.text)}</del>` : `<ins>${h(p.text)}</ins>`)).join('');
}

function conversationHtml(change: ConversationChange): string {
  const rows = change.turns
    .map(
      (t) =>
        `<tr><td class="n">${turnNumber(t.index)}</td><td>${h(t.user)}</td><td>${h(t.labelsA.join(', ') || '–')}${t.expectationsA === false ? ' · expectation unmet' : ''}</td><td>${h(t.labelsB.join(', ') || '–')}${t.expectationsB === false ? ' · expectation unmet' : ''}</td><td>${diffHtml(t.replyDiff)}</td></tr>`,
    )
    .join('');
  const why = (outcome: string, failedBy: readonly string[]) => `${outcome}${failedBy.length ? ` (${failedBy.join(', ')})` : ''}`;
  return `<h3>${h(change.key)}: ${h(why(change.outcomeA, change.failedByA))} → ${h(why(change.outcomeB, change.failedByB))}</h3>
<table><thead><tr><th class="n">turn</th><th>driver</th><th>labels A</th><th>labels B</th><th>reply (<del>A</del> → <ins>B</ins>)</th></tr></thead><tbody>${rows || '<tr><td colspan="5">no turn differs</td></tr>'}</tbody></table>`;
}

/** The compare report's "Fixed and regressed" section: the conversations whose outcome changed between the two builds, turn by turn. */
export function changesSection(changes: RunChanges, nameA: string, nameB: string): ReportSection {
  const build = (name: string, b: string | null) => `${h(name)}${b ? ` (build <code>${h(b)}</code>)` : ' (no build recorded)'}`;
  const group = (title: string, list: readonly ConversationChange[]) => (list.length ? `<h3>${title}: ${list.length}</h3>${list.map(conversationHtml).join('')}` : `<p>${title}: none.</p>`);
  return {
    title: 'Fixed and regressed',
    html:
      `<p>A = ${build(nameA, changes.buildA)}, B = ${build(nameB, changes.buildB)}. Conversations matched by key: ${changes.fixed.length} fixed, ${changes.regressed.length} regressed, ` +
      `${changes.otherChanges.length} other changes; unchanged ${changes.unchanged.pass} passing, ${changes.unchanged.fail} failing, ${changes.unchanged.other} other` +
      `${changes.onlyInA.length || changes.onlyInB.length ? `; only in A ${changes.onlyInA.length}, only in B ${changes.onlyInB.length}` : ''}.</p>` +
      group('Fixed (fail in A, pass in B)', changes.fixed) +
      group('Regressed (pass in A, fail in B)', changes.regressed) +
      (changes.otherChanges.length ? group('Other changes', changes.otherChanges) : ''),
  };
}

/**
 * What changed between two stored runs of one plan (A the earlier build), conversation by conversation, with the builds
 * they recorded; for runs of different plans, why their conversations are not paired: `icabench compare` and the bench app.
 */
export function storedRunChanges(store: ResultStore, a: string, b: string): { changes: RunChanges } | { unpaired: string } {
  const name = (id: string) => store.getRun(id)?.name ?? id;
  return pairedRunChanges([...store.conversations(a)], [...store.conversations(b)], { a: name(a), b: name(b) }, { a: unitBuildOf(store, a)?.build ?? null, b: unitBuildOf(store, b)?.build ?? null });
}

/** The compare report's section for runs whose conversations were not paired: the reason. */
export function unpairedSection(reason: string): ReportSection {
  return { title: 'Fixed and regressed', html: `<p data-testid="unpaired">${h(reason)}. The rates and tests above compare the runs as samples.</p>` };
}
