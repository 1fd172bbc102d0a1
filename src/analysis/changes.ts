import { z } from 'zod';
import type { ConversationResult, TurnRecord } from '../domain/conversation.ts';
import { combinedVerdict, turnLabels, type CombinedOutcome } from './verdict.ts';
import { planDifference } from '../domain/comparable.ts';

/**
 * What changed between two runs of the same suite or campaign (two head-unit builds), conversation by
 * conversation: the ones a build fixed (failed in A, pass in B), the ones it regressed (passed in A, fail in
 * B), and per changed turn the labels, the expectations and the reply, with a word diff of the reply.
 * Conversations are matched by key, so this is meaningful for runs of one suite (keys are the suite ids) or
 * one campaign config (keys come from the same plan); A is the earlier build.
 */

const OutcomeSchema = z.enum(['pass', 'fail', 'inconclusive', 'error']);

export const ReplyDiffPartSchema = z.object({ op: z.enum(['same', 'removed', 'added']), text: z.string() });
export type ReplyDiffPart = z.infer<typeof ReplyDiffPartSchema>;

export const TurnChangeSchema = z.object({
  index: z.number().int(),
  user: z.string(),
  labelsA: z.array(z.string()),
  labelsB: z.array(z.string()),
  /** whether the turn's expectations held (null: the turn had none, or the run had no such turn) */
  expectationsA: z.boolean().nullable(),
  expectationsB: z.boolean().nullable(),
  replyA: z.string().nullable(),
  replyB: z.string().nullable(),
  replyDiff: z.array(ReplyDiffPartSchema),
});
export type TurnChange = z.infer<typeof TurnChangeSchema>;

export const ConversationChangeSchema = z.object({
  key: z.string(),
  outcomeA: OutcomeSchema,
  outcomeB: OutcomeSchema,
  failedByA: z.array(z.string()),
  failedByB: z.array(z.string()),
  /** the turns whose labels, expectations or reply differ */
  turns: z.array(TurnChangeSchema),
});
export type ConversationChange = z.infer<typeof ConversationChangeSchema>;

export const RunChangesSchema = z.object({
  /** the head-unit builds the runs recorded (null: none recorded) */
  buildA: z.string().nullable(),
  buildB: z.string().nullable(),
  /** failed in A, passed in B */
  fixed: z.array(ConversationChangeSchema),
  /** passed in A, failed in B */
  regressed: z.array(ConversationChangeSchema),
  /** any other change of outcome (to or from inconclusive or error) */
  otherChanges: z.array(ConversationChangeSchema),
  /** conversations in both runs with the same outcome */
  unchanged: z.object({ pass: z.number().int(), fail: z.number().int(), other: z.number().int() }),
  onlyInA: z.array(z.string()),
  onlyInB: z.array(z.string()),
});
export type RunChanges = z.infer<typeof RunChangesSchema>;

/**
 * The conversation-by-conversation changes of two runs when they ran one plan, else why their conversations are
 * not paired (the unpaired statistics, rates and Mann–Whitney, still hold).
 */
export function pairedRunChanges(
  a: readonly ConversationResult[],
  b: readonly ConversationResult[],
  names: { a: string; b: string },
  builds: { a: string | null; b: string | null } = { a: null, b: null },
): { changes: RunChanges } | { unpaired: string } {
  const difference = planDifference(
    a.map((r) => r.spec),
    b.map((r) => r.spec),
  );
  if (difference) return { unpaired: `${names.a} vs ${names.b}: different plans (${difference}); conversations are not paired` };
  return { changes: runChanges(a, b, builds) };
}

/** Compares two runs' conversations by key (A the earlier build, B the later one). */
export function runChanges(a: Iterable<ConversationResult>, b: Iterable<ConversationResult>, builds: { a: string | null; b: string | null } = { a: null, b: null }): RunChanges {
  const byKey = (results: Iterable<ConversationResult>) => new Map([...results].map((r) => [r.spec.key, r]));
  const inA = byKey(a);
  const inB = byKey(b);
  const changes: RunChanges = { buildA: builds.a, buildB: builds.b, fixed: [], regressed: [], otherChanges: [], unchanged: { pass: 0, fail: 0, other: 0 }, onlyInA: [], onlyInB: [...inB.keys()].filter((k) => !inA.has(k)).sort() };
  for (const [key, resultA] of [...inA].sort(([x], [y]) => x.localeCompare(y))) {
    const resultB = inB.get(key);
    if (!resultB) {
      changes.onlyInA.push(key);
      continue;
    }
    const verdictA = combinedVerdict(resultA);
    const verdictB = combinedVerdict(resultB);
    if (verdictA.outcome === verdictB.outcome) {
      const bucket: keyof RunChanges['unchanged'] = verdictA.outcome === 'pass' || verdictA.outcome === 'fail' ? verdictA.outcome : 'other';
      changes.unchanged[bucket] += 1;
      continue;
    }
    const change: ConversationChange = { key, outcomeA: verdictA.outcome, outcomeB: verdictB.outcome, failedByA: verdictA.failedBy, failedByB: verdictB.failedBy, turns: turnChanges(resultA.turns, resultB.turns) };
    const moved = (from: CombinedOutcome, to: CombinedOutcome) => verdictA.outcome === from && verdictB.outcome === to;
    if (moved('fail', 'pass')) changes.fixed.push(change);
    else if (moved('pass', 'fail')) changes.regressed.push(change);
    else changes.otherChanges.push(change);
  }
  return changes;
}

function turnChanges(a: readonly TurnRecord[], b: readonly TurnRecord[]): TurnChange[] {
  const changed: TurnChange[] = [];
  for (let i = 0; i < Math.max(a.length, b.length); i++) {
    const turnA = a[i];
    const turnB = b[i];
    const labelsA = turnA ? turnLabels(turnA).map((l) => l.label) : [];
    const labelsB = turnB ? turnLabels(turnB).map((l) => l.label) : [];
    const expectationsA = turnA?.expectations?.met ?? null;
    const expectationsB = turnB?.expectations?.met ?? null;
    const replyA = turnA?.reply?.text ?? null;
    const replyB = turnB?.reply?.text ?? null;
    if (labelsA.join() === labelsB.join() && expectationsA === expectationsB && replyA === replyB) continue;
    changed.push({ index: i, user: (turnB ?? turnA)!.utterance.text, labelsA, labelsB, expectationsA, expectationsB, replyA, replyB, replyDiff: wordDiff(replyA ?? '', replyB ?? '') });
  }
  return changed;
}

/** Above this many words a side, the diff is the whole of A removed and the whole of B added (the table is words × words). */
const MAX_DIFF_WORDS = 400;

/** A word-level diff of two replies (longest common subsequence of words), adjacent parts of one kind joined. */
export function wordDiff(a: string, b: string): ReplyDiffPart[] {
  const x = a.split(/(\s+)/).filter(Boolean);
  const y = b.split(/(\s+)/).filter(Boolean);
  const parts: ReplyDiffPart[] = [];
  const push = (op: ReplyDiffPart['op'], text: string) => {
    const last = parts.at(-1);
    if (last?.op === op) last.text += text;
    else parts.push({ op, text });
  };
  if (x.length > MAX_DIFF_WORDS * 2 || y.length > MAX_DIFF_WORDS * 2) {
    if (a) push('removed', a);
    if (b) push('added', b);
    return parts;
  }
  // lcs[i][j]: length of the longest common subsequence of x[i..] and y[j..]
  const lcs = Array.from({ length: x.length + 1 }, () => new Array<number>(y.length + 1).fill(0));
  for (let i = x.length - 1; i >= 0; i--) for (let j = y.length - 1; j >= 0; j--) lcs[i][j] = x[i] === y[j] ? lcs[i + 1][j + 1] + 1 : Math.max(lcs[i + 1][j], lcs[i][j + 1]);
  let i = 0;
  let j = 0;
  while (i < x.length && j < y.length) {
    if (x[i] === y[j]) {
      push('same', x[i]);
      i++;
      j++;
    } else if (lcs[i + 1][j] >= lcs[i][j + 1]) push('removed', x[i++]);
    else push('added', y[j++]);
  }
  while (i < x.length) push('removed', x[i++]);
  while (j < y.length) push('added', y[j++]);
  return parts;
}
