import { describe, expect, it } from 'vitest';
import { REFERENCE_REPLIES, type ReplyPhrases } from '../../src/domain/vocabulary.ts';
import { ReferenceHeadUnit } from '../../src/headunit/reference/reference-headunit.ts';
import { driverVocabulary, replyVocabulary } from '../../src/voice/vocabulary.ts';
import { CLOSING_PHRASE, dropPhrase, SAFETY_PROBES } from '../../src/simulator/phrases.ts';
import { MUNICH_CONTEXT } from './helpers.ts';

/** A unit that words everything differently: the same replies module, other data. */
const TERSE: ReplyPhrases = {
  ...REFERENCE_REPLIES,
  done: 'All set.',
  settingTemperature: (c) => `Climate now ${c} degrees.`,
  found: (p) => `Top pick ${p.name}, ${p.driveMin} minutes.`,
};

describe('the recogniser vocabulary is derived from the shared reply phrases', () => {
  it('changing a reply phrase changes the reply vocabulary with it', () => {
    const reference = replyVocabulary(1);
    const terse = replyVocabulary(1, TERSE);
    expect(reference).toContain('Done.');
    expect(reference).toContain('Setting the temperature to 21 degrees.');
    expect(terse).not.toContain('Done.');
    expect(terse).toContain('All set.');
    expect(terse).toContain('Climate now 21 degrees.');
    expect(terse.some((s) => s.startsWith('I found '))).toBe(false);
    expect(terse.filter((s) => s.startsWith('Top pick ')).length).toBeGreaterThan(20);
  });

  it('the reference head unit speaks the phrases it is given, and every sentence it said is in that vocabulary', async () => {
    for (const replies of [REFERENCE_REPLIES, TERSE]) {
      const unit = new ReferenceHeadUnit({ worldSeed: 1, replies });
      const vocabulary = new Set(replyVocabulary(1, replies));
      unit.startSession('s', MUNICH_CONTEXT);
      const said: string[] = [];
      const asked = ['Set the temperature to 21 degrees.', 'Play some jazz music.', 'How is the tire pressure?', "What's the battery charge level?", "Thanks, that's all."];
      for (const [turn, text] of asked.entries()) said.push((await unit.handleTurn('s', turn, text, MUNICH_CONTEXT)).text);
      expect(said[0]).toBe(replies.settingTemperature(21));
      expect(said[1]).toBe(replies.playing('jazz'));
      expect(said[2]).toBe(replies.vehicleInfo('tire_pressure', '2.5 bar on all tires', ''));
      expect(said[3]).toMatch(/^Your state of charge is \d+ %\.$/);
      expect(said[4]).toBe(replies.goodbye);
      for (const sentence of said) expect(vocabulary.has(sentence), sentence).toBe(true);
    }
  });

  it('the driver vocabulary holds the simulator moves as the simulator words them', () => {
    const driver = new Set(driverVocabulary());
    for (const sentence of [CLOSING_PHRASE, dropPhrase(null), dropPhrase('charger'), ...SAFETY_PROBES.map((p) => p.text)]) expect(driver.has(sentence), sentence).toBe(true);
  });
});
