import { describe, expect, it } from 'vitest';
import { digitsFromSpokenNumbers, formatRecognizedText, punctuateByPauses, surfaceSpellings } from '../../src/voice/formatting.ts';
import { normalizeWords } from '../../src/voice/metrics.ts';
import { parseTimedOutput } from '../../src/voice/pocketsphinx.ts';
import type { RecognizedWord } from '../../src/voice/types.ts';

const timed = (entries: Array<[string, number, number]>): RecognizedWord[] => entries.map(([word, startMs, endMs]) => ({ word, startMs, endMs }));

describe('digitsFromSpokenNumbers (inverse text normalization)', () => {
  it.each([
    ['set the temperature to twenty one degrees', 'set the temperature to 21 degrees'],
    ['Open at twenty zero zero.', 'Open at 20:00.'],
    ['open at twelve thirty', 'open at 12:30'],
    ['open at nineteen zero five', 'open at 19:05'],
    ['Rated at least four point two, please.', 'Rated at least 4.2, please.'],
    ['play bayern three on the radio', 'play bayern 3 on the radio'],
    ['The one in Friedrichshain.', 'The one in Friedrichshain.'],
    ['one degree warmer', '1 degree warmer'],
    ['Twenty, one', '20, one'],
    ['find me a cheap italian restaurant', 'find me a cheap italian restaurant'],
  ])('%s → %s', (spoken, written) => {
    expect(digitsFromSpokenNumbers(spoken)).toBe(written);
  });

  it('is undone by normalizeWords, so WER is unaffected', () => {
    for (const spoken of ['set the temperature to twenty one degrees', 'open at twenty zero zero', 'rated at least four point two']) {
      expect(normalizeWords(digitsFromSpokenNumbers(spoken)).join(' ')).toBe(spoken);
    }
  });
});

describe('punctuateByPauses', () => {
  it('ends sentences at long pauses, puts commas at short ones, keeps numbers whole', () => {
    const words = timed([
      ['come', 340, 570], ['on', 580, 830], // 330 ms pause: sentence end
      ["that's", 1160, 1450], ['not', 1460, 1670], ['what', 1680, 1860], ['i', 1870, 1940], ['asked', 1950, 2220],
      ['find', 2650, 2980], ['me', 2990, 3120], ['a', 3130, 3180], ['park', 3190, 3560], // 160 ms: comma
      ['in', 3720, 3830], ['schoneberg', 3840, 4420],
      ['rated', 4800, 5000], ['four', 5010, 5200], ['point', 5210, 5400], ['two', 5600, 5800], // 200 ms inside a number: nothing
    ]);
    expect(punctuateByPauses(words)).toBe("Come on. That's not what i asked. Find me a park, in schoneberg. Rated four point two.");
    expect(punctuateByPauses([])).toBe('');
  });
});

describe('surfaceSpellings and formatRecognizedText', () => {
  const spellings = surfaceSpellings(['Find me a park, in Schöneberg.', 'Actually, take me to Café Central.', 'Play Radio Eins on the radio.', 'Actually, take me to Rosengarten.']);

  it('restores accents and names, not words that also occur in lower case', () => {
    expect(spellings.get('schoneberg')).toEqual(['Schöneberg']);
    expect(spellings.get('cafe')).toEqual(['Café']);
    expect(spellings.get('central')).toEqual(['Central']);
    expect(spellings.get('rosengarten')).toEqual(['Rosengarten']);
    expect(spellings.has('radio')).toBe(false);
    expect(spellings.has('find')).toBe(false); // capital only at a sentence start
  });

  it('turns timed recogniser words into text a typed-input assistant understands', () => {
    const words = timed([['actually', 0, 500], ['take', 700, 1000], ['me', 1000, 1100], ['to', 1100, 1200], ['cafe', 1200, 1500], ['central', 1500, 1900], ['at', 2300, 2400], ['twenty', 2400, 2700], ['zero', 2700, 2900], ['zero', 2900, 3100]]);
    expect(formatRecognizedText({ text: '', words }, spellings)).toBe('Actually, take me to Café Central. At 20:00.');
    expect(formatRecognizedText({ text: 'set the temperature to twenty one degrees' }, spellings)).toBe('set the temperature to 21 degrees');
  });
});

describe('parseTimedOutput', () => {
  it('reads pocketsphinx -time yes output into words, dropping silences and variant numbers', () => {
    const output = [
      'navigate to bogenhausen',
      '<s> 0.180 0.320 0.999900',
      'navigate(2) 0.330 0.830 0.724816',
      '<sil> 0.840 0.880 0.959729',
      'to(3) 0.890 1.000 0.655112',
      '[NOISE] 1.000 1.010 0.5',
      'bogenhausen 1.010 1.750 0.999900',
      '</s> 1.760 1.900 0.999900',
      '',
    ].join('\n');
    const transcript = parseTimedOutput(output, 300);
    expect(transcript.text).toBe('navigate to bogenhausen');
    expect(transcript.words?.[0]).toEqual({ word: 'navigate', startMs: 30, endMs: 530 });
    expect(transcript.words?.map((w) => w.word)).toEqual(['navigate', 'to', 'bogenhausen']);
  });
});
