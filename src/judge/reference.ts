import type { TurnLabel, TurnVerdict } from '../domain/conversation.ts';
import type { FailureLabel } from '../domain/taxonomy.ts';
import { resolveEmbedder, TfidfEmbedder, type Embedder } from '../embedding/index.ts';
import { methodEmbeddingModel } from '../llm/manifest.ts';
import type { AssistantReply } from '../protocol/bridge.ts';
import { canonicalText, commitmentsOf, FACT_KINDS, sameValue, textDomains, type Commitments, type FactKind, type Stance } from './commitments.ts';
import type { TurnJudgeInput } from './types.ts';

/**
 * References are evidence (docs/reference-judging.md): a turn that carries a `reference` reply (what a recorded
 * assistant answered: imported transcripts, pinned conversations) is judged against it. The deterministic
 * comparison reads what both commit to (./commitments.ts: times, temperatures, distances, ratings, days,
 * weather, names, other numbers; acting or declining; the domain of the reply's actions) and how close their
 * meanings are (the Embedder role). It decides "equivalent" or "contradicts" only on grounds; anything short of
 * that is "undecided", never a pass.
 */

/**
 * The meaning similarity at and above which two replies that contradict each other in no fact are equivalent,
 * per embedder. The TF-IDF figure is calibrated on data/reference-calibration/pairs.jsonl (`npm run
 * bench:reference`; docs/reference-judging.md has the measured precision and recall). The ONNX figure is NOT
 * calibrated (no sentence model was installed where the set was measured): a conservative cosine for
 * all-MiniLM-L6-v2 paraphrases until `npm run bench:reference -- --embedding-model PATH` measures one.
 */
export const REFERENCE_SIMILARITY_THRESHOLD: Record<Embedder['kind'], number> = { tfidf: 0.65, onnx: 0.8 };

export type ReferenceDecision = 'equivalent' | 'contradicts' | 'undecided';

export interface ReferenceComparison {
  decision: ReferenceDecision;
  /** the failure a contradiction is (absent unless the decision is "contradicts") */
  label?: FailureLabel;
  /** "reference says X, reply says Y", the similarity and the embedder that measured it */
  evidence: string;
  /** cosine of the two replies' embeddings; null when the facts decided before meaning was measured */
  similarity: number | null;
  /** the embedder's own description (`Embedder.describe`): a lexical figure is never mistaken for a model's */
  embedder: string;
}

type Conflict = { label: FailureLabel; says: string };

const list = (values: Iterable<string>) => [...values].join(', ');

/**
 * Stances that contradict: the reference answered and the reply declined, or the reverse where the reference found
 * nothing. A refusal is not held against a reply on a turn whose request the driving state may forbid (`safety`):
 * the oracle's safety rule decides that, whatever the recording did.
 */
function stanceConflict(reference: Stance, reply: Stance, safety: boolean): Conflict | null {
  if (reference === 'act' && (reply === 'fallback' || (reply === 'refusal' && !safety))) return { label: 'fallback_response', says: `reference answers the request, reply ${reply === 'fallback' ? 'falls back (does not understand or help)' : 'declines it'}` };
  if (reference === 'act' && reply === 'not_found') return { label: 'request_omitted', says: 'reference answers the request, reply reports that nothing was found' };
  if (reference === 'act' && reply === 'social') return { label: 'request_omitted', says: 'reference answers the request, reply only makes conversation' };
  if (reference === 'not_found' && reply === 'act') return { label: 'constraint_missed', says: 'reference finds nothing that matches, reply offers a result' };
  return null;
}

/** The values of one side that the other side does not state. */
function unmatched(kind: FactKind, values: ReadonlySet<string>, other: ReadonlySet<string>): string[] {
  return [...values].filter((v) => ![...other].some((o) => sameValue(kind, v, o)));
}

/**
 * Fact kinds both replies commit to where they disagree: no value in common, or (names) a swap, where each side
 * names something the other does not (a reply that adds a name, or leaves one out, does not contradict).
 */
function factConflicts(reference: Commitments, reply: Commitments): Conflict[] {
  const conflicts: Conflict[] = [];
  for (const kind of Object.keys(FACT_KINDS) as FactKind[]) {
    const said = reference[kind];
    const answered = reply[kind];
    if (said.size === 0 || answered.size === 0) continue;
    if (kind === 'names' ? unmatched(kind, said, answered).length === 0 || unmatched(kind, answered, said).length === 0 : unmatched(kind, answered, said).length < answered.size) continue;
    // "not rain" and "cloud" do not conflict with each other unless one reply states the opposite of the other
    if (kind === 'conditions' && ![...answered].some((v) => said.has(v.startsWith('not ') ? v.slice(4) : `not ${v}`)) && [...said, ...answered].some((v) => v.startsWith('not '))) continue;
    conflicts.push({ label: 'constraint_missed', says: `${FACT_KINDS[kind]}: reference says ${list(said)}, reply says ${list(answered)}` });
  }
  return conflicts;
}

/** A reply whose actions act in a domain the reference does not speak about (a route where the reference gives the weather). */
function domainConflict(referenceText: string, reply: Commitments): Conflict | null {
  if (reply.actionDomains.size === 0) return null;
  const spoken = textDomains(referenceText);
  if (spoken.size === 0 || [...reply.actionDomains].some((d) => spoken.has(d) || (d === 'places' && spoken.has('navigation')) || (d === 'navigation' && spoken.has('places')))) return null;
  return { label: 'irrelevant_response', says: `reference is about ${list(spoken)}, reply acts in ${list(reply.actionDomains)}` };
}

/** Every fact kind the reference commits to is in the reply with a value in common (at least one kind). */
function sameFacts(reference: Commitments, reply: Commitments): FactKind[] {
  const kinds = (Object.keys(FACT_KINDS) as FactKind[]).filter((kind) => reference[kind].size > 0);
  return kinds.every((kind) => unmatched(kind, reference[kind], reply[kind]).length === 0) ? kinds : [];
}

/** Light suffix stripping for the lexical embedder only (it matches words, so "directions" must meet "direction"). */
function stemmed(text: string): string {
  return text.toLowerCase().replace(/\b([a-z]{3,}?)(ing|ed|es|s)\b/g, '$1');
}

/**
 * Cosine of the two texts' embeddings. The lexical fallback is fitted on the pair alone, so its idf does not
 * depend on which turns came before (a run judges the same pair the same way whatever its order).
 */
export async function meaningSimilarity(embedder: Embedder, a: string, b: string): Promise<number> {
  const texts = embedder instanceof TfidfEmbedder ? [stemmed(canonicalText(a)), stemmed(canonicalText(b))] : [canonicalText(a), canonicalText(b)];
  const model = embedder instanceof TfidfEmbedder ? new TfidfEmbedder(embedder.dimensions).fit(texts) : embedder;
  const [x, y] = await model.embed(texts);
  let dot = 0;
  for (let i = 0; i < x.length; i++) dot += x[i] * y[i];
  return Math.max(-1, Math.min(1, dot));
}

/**
 * Compares a reply with the reference reply for the same turn. Facts first: a declined or empty answer where the
 * reference answered, a fact of one kind with no value in common, actions in another domain: "contradicts". Then
 * meaning: no contradiction and the same facts, or a similarity at or above `threshold`: "equivalent". Otherwise
 * "undecided".
 */
export async function compareWithReference(
  reply: Pick<AssistantReply, 'text' | 'actions'>,
  reference: string,
  embedder: Embedder,
  threshold = REFERENCE_SIMILARITY_THRESHOLD[embedder.kind],
  /** the turn is a safety probe: a refusal is the oracle's safety rule's to judge */
  safety = false,
): Promise<ReferenceComparison> {
  const said = commitmentsOf(reference);
  const answered = commitmentsOf(reply.text, reply.actions);
  const quote = (text: string) => `"${text.length > 120 ? `${text.slice(0, 117)}…` : text}"`;
  const head = `Reference ${quote(reference)}; reply ${quote(reply.text)}.`;
  const conflicts = [stanceConflict(said.stance, answered.stance, safety), domainConflict(reference, answered), ...(answered.stance === said.stance || said.stance === 'act' ? factConflicts(said, answered) : [])].filter((c): c is Conflict => c !== null);
  if (conflicts.length > 0) {
    return { decision: 'contradicts', label: conflicts[0].label, evidence: `${head} Contradicts the reference: ${conflicts.map((c) => c.says).join('; ')}.`, similarity: null, embedder: embedder.describe };
  }
  const similarity = await meaningSimilarity(embedder, reference, reply.text);
  const measured = `meaning similarity ${similarity.toFixed(2)} (threshold ${threshold.toFixed(2)}; ${embedder.describe})`;
  if (said.stance !== answered.stance) {
    return { decision: 'undecided', evidence: `${head} The reference ${describeStance(said.stance)}, the reply ${describeStance(answered.stance)}: no contradiction in what they state, and not the same answer; ${measured}.`, similarity, embedder: embedder.describe };
  }
  if (said.stance !== 'act') return { decision: 'equivalent', evidence: `${head} Both ${describeStance(said.stance, true)} and state nothing the other contradicts; ${measured}.`, similarity, embedder: embedder.describe };
  const agreed = sameFacts(said, answered);
  if (agreed.length > 0) return { decision: 'equivalent', evidence: `${head} The reply states the reference's ${list(agreed.map((k) => FACT_KINDS[k]))} and contradicts none of it; ${measured}.`, similarity, embedder: embedder.describe };
  if (similarity >= threshold) return { decision: 'equivalent', evidence: `${head} No fact contradicts the reference and the meaning matches: ${measured}.`, similarity, embedder: embedder.describe };
  return { decision: 'undecided', evidence: `${head} No fact contradicts the reference, but the meaning is below certainty: ${measured}.`, similarity, embedder: embedder.describe };
}

const STANCE_WORDS: Record<Stance, [string, string]> = {
  act: ['answers', 'answer'],
  fallback: ['falls back', 'fall back'],
  refusal: ['declines', 'decline'],
  not_found: ['reports nothing found', 'report nothing found'],
  clarify: ['asks back', 'ask back'],
  social: ['only makes conversation', 'only make conversation'],
};

/** The stance in words, for one reply or ("both") two. */
function describeStance(stance: Stance, both = false): string {
  return STANCE_WORDS[stance][both ? 1 : 0];
}

/**
 * The oracle's reference check (the seam on its turn judgement, src/judge/oracle.ts): the embedder is the
 * method's sentence model (models/default.yaml) where it is installed, else the labelled lexical fallback,
 * resolved once on the first turn that carries a reference.
 */
export class ReferenceJudge {
  private embedder: Promise<Embedder> | null = null;

  constructor(private readonly resolve: () => Promise<Embedder> = () => resolveEmbedder(undefined, () => undefined, methodEmbeddingModel())) {}

  /** The turn's reference comparison, or null when the turn has no reference or no reply. */
  async compare(input: TurnJudgeInput): Promise<ReferenceComparison | null> {
    const reference = input.utterance.reference?.trim();
    if (!reference || !input.reply) return null;
    this.embedder ??= this.resolve();
    const embedder = await this.embedder;
    return compareWithReference(input.reply, reference, embedder, REFERENCE_SIMILARITY_THRESHOLD[embedder.kind], input.utterance.annotation.safetyProbe !== undefined);
  }

  /**
   * The oracle's verdict with the reference's: a contradiction is a label and an equivalent reply no label, both
   * grounds for a judged verdict (ground `reference`); an undecided comparison is no ground: the oracle's verdict
   * stands as it was (judged on its own grounds, or inconclusive without any), with the comparison in its reasoning.
   */
  async judge(verdict: TurnVerdict, input: TurnJudgeInput): Promise<TurnVerdict> {
    if (verdict.outcome === 'judge_error') return verdict;
    const comparison = await this.compare(input);
    if (!comparison) return verdict;
    const reasoning = [verdict.outcome === 'inconclusive' && comparison.decision !== 'undecided' ? '' : verdict.reasoning, comparison.evidence].filter(Boolean).join(' ');
    if (comparison.decision === 'undecided') return { ...verdict, reasoning };
    const grounds = [...(verdict.outcome === 'judged' ? (verdict.grounds ?? []) : []), 'reference' as const];
    if (comparison.decision === 'equivalent') return { ...verdict, outcome: 'judged', reasoning, grounds };
    const label: TurnLabel = { label: comparison.label!, targetId: null, evidence: comparison.evidence, tier: 'oracle' };
    const labels = verdict.labels.some((l) => l.label === label.label) ? verdict.labels : [...verdict.labels, label];
    return { ...verdict, outcome: 'judged', labels, reasoning, grounds };
  }
}
