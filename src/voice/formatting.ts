import { SPOKEN_NUMBER_VALUES, normalizeWords } from './metrics.ts';
import type { RecognizedWord, Transcript } from './types.ts';

/**
 * Display formatting of recogniser output, as a speech recogniser's back end does it before an
 * assistant's language understanding reads the text: punctuation from pauses, original spellings
 * (Schöneberg, Café) and digits for spoken numbers. Recognisers produce lower-case words only.
 */

const WORD_VALUES = SPOKEN_NUMBER_VALUES;
/** after these a lone "one" is a quantity ("one degree"); elsewhere it stays a word ("the one in Mitte") */
const UNIT_WORDS = new Set(['degree', 'degrees', 'minute', 'minutes', 'hour', 'hours', 'k', 'km', 'point', 'star', 'stars', 'percent']);

/** Reads a run of number words starting at `start` ("twenty one" → 21, "one hundred five" → 105); null if none. */
function readNumber(words: readonly string[], start: number): { value: number; next: number } | null {
  let i = start;
  const first = WORD_VALUES.get(words[i]);
  if (first === undefined) return null;
  let value = first;
  i += 1;
  if (first >= 20 && first % 10 === 0 && (WORD_VALUES.get(words[i]) ?? 10) < 10 && WORD_VALUES.get(words[i]) !== 0) value += WORD_VALUES.get(words[i++]) as number;
  else if (first > 0 && first < 10 && words[i] === 'hundred') {
    value = first * 100;
    i += 1;
    const rest = readNumber(words, i);
    if (rest && rest.value < 100) {
      value += rest.value;
      i = rest.next;
    }
  }
  return { value, next: i };
}

/**
 * Inverse text normalization for recogniser output: spoken numbers back to the digits a text
 * assistant expects ("twenty one degrees" → "21 degrees", "four point two" → "4.2",
 * "at twenty zero zero" → "at 20:00", "at twelve thirty" → "at 12:30"). normalizeWords undoes it.
 */
export function digitsFromSpokenNumbers(text: string): string {
  // numbers never run across punctuation: convert each stretch between marks on its own
  return text
    .split(/([.,!?;]+)/)
    .map((part, i) => (i % 2 === 1 ? part : convertNumberWords(part)))
    .join('');
}

function convertNumberWords(part: string): string {
  const original = part.trim().split(/\s+/).filter(Boolean);
  if (original.length === 0) return part;
  const words = original.map((w) => w.toLowerCase());
  const out: string[] = [];
  for (let i = 0; i < words.length; ) {
    const number = readNumber(words, i);
    const loneOne = number !== null && number.next === i + 1 && words[i] === 'one' && !UNIT_WORDS.has(words[i + 1]);
    if (!number || loneOne) {
      out.push(original[i++]);
      continue;
    }
    const afterTimeWord = i > 0 && ['at', 'by', 'until'].includes(words[i - 1]);
    if (afterTimeWord && number.value < 24) {
      if (words[number.next] === 'zero') {
        const digit = WORD_VALUES.get(words[number.next + 1]);
        if (digit !== undefined && digit < 10) {
          out.push(`${number.value}:0${digit}`);
          i = number.next + 2;
          continue;
        }
      }
      const minutes = readNumber(words, number.next);
      if (minutes && minutes.value >= 10 && minutes.value < 60) {
        out.push(`${number.value}:${minutes.value}`);
        i = minutes.next;
        continue;
      }
    }
    if (words[number.next] === 'point') {
      const fraction: number[] = [];
      let j = number.next + 1;
      while (j < words.length && (WORD_VALUES.get(words[j]) ?? 10) < 10) fraction.push(WORD_VALUES.get(words[j++]) as number);
      if (fraction.length) {
        out.push(`${number.value}.${fraction.join('')}`);
        i = j;
        continue;
      }
    }
    out.push(String(number.value));
    i = number.next;
  }
  return `${part.match(/^\s*/)?.[0] ?? ''}${out.join(' ')}${part.match(/\s*$/)?.[0] ?? ''}`;
}


/** Pauses between words that mark a sentence end and a comma in synthetic and read speech. */
export const SENTENCE_PAUSE_MS = 300;
export const COMMA_PAUSE_MS = 120;

function isNumberWord(word: string): boolean {
  return WORD_VALUES.has(word) || word === 'point' || word === 'hundred';
}

/**
 * Joins recognised words into sentences: a pause of SENTENCE_PAUSE_MS or more ends a sentence, a
 * shorter one of COMMA_PAUSE_MS or more is a comma. Sentences start upper-case and end with a period.
 */
export function punctuateByPauses(words: readonly RecognizedWord[]): string {
  if (words.length === 0) return '';
  const sentences: string[][] = [[]];
  words.forEach((w, i) => {
    const current = sentences[sentences.length - 1];
    // a pause inside a number ("four point … two") is hesitation, not punctuation
    const insideNumber = i > 0 && isNumberWord(words[i - 1].word) && isNumberWord(w.word);
    if (i > 0 && !insideNumber) {
      const pause = w.startMs - words[i - 1].endMs;
      if (pause >= SENTENCE_PAUSE_MS) sentences.push([]);
      else if (pause >= COMMA_PAUSE_MS) current[current.length - 1] += ',';
    }
    sentences[sentences.length - 1].push(w.word);
  });
  return sentences
    .filter((s) => s.length)
    .map((s) => {
      const text = s.join(' ').replace(/,$/, '');
      return `${text[0].toUpperCase()}${text.slice(1)}.`;
    })
    .join(' ');
}

/**
 * Spellings the sentences use where a recogniser's lower-case word differs: accents ("Schöneberg" for
 * "schoneberg", "Café" for "cafe") and capitals of names inside a sentence ("Rosengarten", "Tech Today")
 * unless the word also appears in lower case there.
 * The first spelling seen wins.
 */
export function surfaceSpellings(sentences: readonly string[]): Map<string, string[]> {
  const spellings = new Map<string, string[]>();
  const seenLowerCase = new Set<string>();
  for (const sentence of sentences) {
    for (const match of sentence.matchAll(/[\p{L}']+/gu)) {
      const token = match[0];
      const normalized = normalizeWords(token);
      if (normalized.length !== 1) continue;
      const accented = normalized[0] !== token.toLowerCase();
      const sentenceStart = /(^|[.!?]\s*)$/.test(sentence.slice(0, match.index));
      const capitalizedName = token !== token.toLowerCase() && !sentenceStart && token !== 'I';
      if (!sentenceStart && token === token.toLowerCase()) seenLowerCase.add(token);
      if (!accented && !capitalizedName) continue;
      const known = spellings.get(normalized[0]) ?? [];
      if (!known.includes(token)) spellings.set(normalized[0], [...known, token]);
    }
  }
  // a word also written in lower case mid-sentence ("the radio" beside "Radio Eins") is not a name
  for (const [word, forms] of spellings) {
    if (!seenLowerCase.has(word)) continue;
    const accentedForms = forms.filter((f) => f.toLowerCase() !== word);
    if (accentedForms.length) spellings.set(word, accentedForms);
    else spellings.delete(word);
  }
  return spellings;
}

/** Recogniser output as display text: punctuated from word timings when present, original spellings, digits. */
export function formatRecognizedText(transcript: Transcript, spellings: ReadonlyMap<string, readonly string[]>): string {
  const text = transcript.words?.length ? punctuateByPauses(transcript.words) : transcript.text;
  const spelled = text.replace(/[\p{L}']+/gu, (word) => {
    if (word === 'i') return 'I';
    const original = spellings.get(word.toLowerCase())?.[0];
    return original ?? word;
  });
  return digitsFromSpokenNumbers(spelled);
}
