/**
 * The lexical tools of the deterministic tier: normalisation, content terms, sentence splitting and
 * the matching rules that decide whether an answer states a fact (docs/manual-qa.md, "Matching").
 * Everything here is lexical on purpose: it is reproducible and needs no model, and it is only
 * trusted for what it can see (a step or a warning said in the manual's words or close to them).
 */

const STOPWORDS = new Set(
  (
    'a an the and or but if then else of to in on at by for with from into onto over under about as is are was were be been being am do does did ' +
    'done doing have has had having it its this that these those there here their them they he she we you your yours i me my our us not no nor ' +
    'so than too very can could will would shall should may might must also just only such each any all both either neither some more most other ' +
    'own same what which who whom whose when where why how while during before after above below up down out off again further once via e.g ' +
    'eg i.e ie etc approx s t'
  ).split(/\s+/),
);

/** Lowercase, accents and punctuation removed, dashes and slashes as spaces. */
export function normalise(text: string): string {
  return text
    .toLowerCase()
    .normalize('NFKD')
    .replace(/[\u0300-\u036f]/g, '')
    .replace(/[’']/g, '')
    .replace(/[^a-z0-9]+/g, ' ')
    .trim();
}

/** A light stemmer (plural and -ing/-ed endings), enough to match "switching"/"switch", "sensors"/"sensor". */
export function stem(word: string): string {
  let w = word;
  if (w.length > 4 && w.endsWith('ies')) w = `${w.slice(0, -3)}y`;
  else if (w.length > 3 && w.endsWith('es') && /(ss|x|ch|sh)es$/.test(w)) w = w.slice(0, -2);
  else if (w.length > 3 && w.endsWith('s') && !w.endsWith('ss') && !w.endsWith('us')) w = w.slice(0, -1);
  if (w.length > 5 && w.endsWith('ing')) w = w.slice(0, -3);
  else if (w.length > 4 && w.endsWith('ed')) w = w.slice(0, -2);
  if (w.length > 3 && /([^aeiouls])\1$/.test(w)) w = w.slice(0, -1);
  if (w.length > 4 && w.endsWith('e')) w = w.slice(0, -1);
  return w;
}

/** Content terms: normalised words without stopwords, stemmed. */
export function contentTerms(text: string): string[] {
  return normalise(text)
    .split(' ')
    .filter((w) => w && !STOPWORDS.has(w))
    .map(stem);
}

/** Content terms as a set; a text of stopwords only ("Off", "More") keeps its words, so it can still be matched. */
export function termSet(text: string): Set<string> {
  const terms = contentTerms(text);
  return new Set(terms.length ? terms : normalise(text).split(' ').filter(Boolean).map(stem));
}

const segmenter = new Intl.Segmenter('en', { granularity: 'sentence' });
const NUMBERING = /^\s*(?:\d{1,2}[.)]|[-*•–])\s+/;

/** Sentences of a text, one per line first (a numbered or bulleted line is one unit), list markers removed. */
export function splitSentences(text: string): string[] {
  const out: string[] = [];
  for (const line of text.split(/\n+/)) {
    const bare = line.replace(NUMBERING, '').trim();
    if (!bare) continue;
    for (const { segment } of segmenter.segment(bare)) {
      const s = segment.trim();
      if (s) out.push(s);
    }
  }
  return out;
}

/** Whether a line of an answer is numbered or bulleted (a step the answer presents as such). */
export function isListedLine(line: string): boolean {
  return NUMBERING.test(line);
}

/** Share of the fact's terms found in the unit (recall of the fact). 0 for a fact without content terms. */
export function termRecall(fact: ReadonlySet<string>, unit: ReadonlySet<string>): number {
  if (fact.size === 0) return 0;
  let hit = 0;
  for (const t of fact) if (unit.has(t)) hit++;
  return hit / fact.size;
}

/** Dice similarity of two term sets. */
export function dice(a: ReadonlySet<string>, b: ReadonlySet<string>): number {
  if (a.size + b.size === 0) return 0;
  let hit = 0;
  for (const t of a) if (b.has(t)) hit++;
  return (2 * hit) / (a.size + b.size);
}

/** Terms that name a hazard in a warning; an answer that covers a warning must name its hazard too. */
export const HAZARD_TERMS = [
  'accident',
  'injury',
  'injuries',
  'death',
  'fatal',
  'damage',
  'fire',
  'burn',
  'burns',
  'explosion',
  'electric shock',
  'poisoning',
  'crash',
  'collision',
  'jammed',
  'pinched',
  'suffocation',
  'skid',
] as const;
const HAZARD_STEMS = HAZARD_TERMS.map((t) => contentTerms(t).join(' '));

/** The hazard terms (stemmed) a text names. */
export function hazardTerms(text: string): string[] {
  const joined = ` ${contentTerms(text).join(' ')} `;
  return [...new Set(HAZARD_STEMS.filter((h) => joined.includes(` ${h} `)))];
}

/**
 * Vague wording that makes an answer unconfident. "may" and "can" are not in it: the manual itself
 * says "there may be a risk of accident". A hedge only counts outside sentences the manual says.
 */
export const HEDGES = ['maybe', 'perhaps', 'possibly', 'probably', 'i think', 'i believe', 'i guess', 'not sure', 'not certain', 'it seems', 'might be', 'could be', 'i am unsure', 'im not sure', 'if i remember'] as const;

export function hedgesIn(text: string): string[] {
  const joined = ` ${normalise(text)} `;
  return HEDGES.filter((h) => joined.includes(` ${h} `));
}

/** Verbs that open an instruction besides those the manual's own steps open with. */
export const BASE_IMPERATIVE_VERBS = [
  'press', 'select', 'turn', 'switch', 'open', 'close', 'pull', 'push', 'hold', 'release', 'tap', 'touch', 'set', 'check', 'make', 'ensure',
  'watch', 'drive', 'stop', 'use', 'remove', 'insert', 'fold', 'lift', 'lower', 'raise', 'connect', 'disconnect', 'activate', 'deactivate',
  'adjust', 'keep', 'wait', 'start', 'clean', 'replace', 'fill', 'follow', 'observe', 'slide', 'move', 'place', 'put', 'call', 'contact',
  'take', 'read', 'heed', 'apply', 'brake', 'attach', 'unlock', 'lock', 'engage', 'fasten', 'store', 'do', 'never', 'avoid', 'have', 'go',
] as const;

/** The first word of a sentence, normalised (for instruction detection). */
export function firstWord(sentence: string): string {
  return normalise(sentence.replace(/^["“'‘(]+/, '')).split(' ')[0] ?? '';
}
