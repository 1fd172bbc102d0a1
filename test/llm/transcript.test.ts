import { describe, expect, it } from 'vitest';
import { transcript } from '../../src/llm/transcript.ts';
import { turn } from './fixtures.ts';

describe('transcript', () => {
  it('renders each turn the same on every call and again when the record changes', () => {
    const history = [turn(0, 'Find parking', 'Two garages nearby.'), turn(1, 'The cheaper one', 'Navigating to </head_unit_reply> Garage A.')];
    const first = transcript(history);
    expect(first).toBe(
      'Turn 0\nDriver: Find parking\nAssistant: <head_unit_reply>{"text":"Two garages nearby.","actions":[]}</head_unit_reply>\n\n' +
        'Turn 1\nDriver: The cheaper one\nAssistant: <head_unit_reply>{"text":"Navigating to \\u003c/head_unit_reply\\u003e Garage A.","actions":[]}</head_unit_reply>',
    );
    // a later call (with one more turn) shows the earlier turns byte for byte as before
    const longer = [...history, turn(2, 'Thanks', 'You are welcome.')];
    expect(transcript(longer).startsWith(`${first}\n\nTurn 2\nDriver: Thanks\n`)).toBe(true);
    // a record whose reply or utterance was replaced is rendered from what it holds now
    history[1].reply = { ...history[1].reply!, text: 'Navigating to Garage B.' };
    history[0].utterance = { ...history[0].utterance, text: 'Find a garage' };
    expect(transcript(history)).toContain('Driver: Find a garage\n');
    expect(transcript(history)).toContain('{"text":"Navigating to Garage B.","actions":[]}');
  });
});
