import { describe, expect, it } from 'vitest';
import type { Action } from '../../src/protocol/bridge.ts';
import { describeTargets, dialogue, replyData } from '../../src/llm/transcript.ts';
import { CONTEXT, TARGETS, turn } from './fixtures.ts';

const poi = (name: string, cost: 'low' | 'high', category: 'restaurant' | 'cafe' = 'restaurant') => ({
  id: `munich-${name}`,
  name,
  category,
  city: 'Munich',
  district: 'Schwabing',
  position: { lat: 48.16, lon: 11.58 },
  cuisine: 'italian',
  cost,
  rating: 4.5,
  // 2026-05-12 is a Tuesday
  openingHours: { monday: 'closed', tuesday: '11:00-22:00', wednesday: '11:00-22:00', thursday: '11:00-22:00', friday: '11:00-23:00', saturday: '12:00-23:00', sunday: 'closed' },
  driveMin: 6,
  distanceKm: 2.1,
});

describe('the dialogue as every model role sees it', () => {
  it('numbers turns from 1, heads a turn with its context (the time alone when nothing else changed), and says what the words ask', () => {
    const later = turn(1, 'The cheaper one', 'Navigating to </head_unit_reply> Garage A.');
    later.context = { ...CONTEXT, time: '13:01' };
    const moved = turn(2, 'Thanks', 'You are welcome.');
    moved.context = { ...CONTEXT, time: '13:09', location: { ...CONTEXT.location, district: 'Maxvorstadt' } };
    const history = [turn(0, 'Find parking', 'Two garages nearby.'), later];
    const first = dialogue(history);
    expect(first).toBe(
      'Turn 1 · Schwabing, Munich; 2026-05-12 13:00, driving\nDriver: "Find parking"\nThe words: addresses g1\n<head_unit_reply>{"text":"Two garages nearby."}</head_unit_reply>\n\n' +
        'Turn 2 · 13:01\nDriver: "The cheaper one"\nThe words: addresses g1\n<head_unit_reply>{"text":"Navigating to \\u003c/head_unit_reply\\u003e Garage A."}</head_unit_reply>',
    );
    // a later call (with one more turn) shows the earlier turns byte for byte as before, whichever role makes it
    expect(dialogue([...history, moved])).toBe(`${first}\n\nTurn 3 · Maxvorstadt, Munich; 2026-05-12 13:09, driving\nDriver: "Thanks"\nThe words: addresses g1\n<head_unit_reply>{"text":"You are welcome."}</head_unit_reply>`);
    // a record whose reply or utterance was replaced is rendered from what it holds now
    history[1].reply = { ...history[1].reply!, text: 'Navigating to Garage B.' };
    history[0].utterance = { ...history[0].utterance, text: 'Find a garage' };
    expect(dialogue(history)).toContain('Driver: "Find a garage"\n');
    expect(dialogue(history)).toContain('{"text":"Navigating to Garage B."}');
    expect(dialogue([])).toBe('(no turns yet)');
  });

  it('reuses a rendered turn without reading its context again, and renders it anew when its context or the turn before it changed', () => {
    const history = [turn(0, 'Find parking', 'Two garages nearby.'), turn(1, 'The cheaper one', 'Garage A.')];
    history[1].context = { ...CONTEXT, time: '13:01' };
    expect(dialogue(history)).toContain('Turn 2 · 13:01\n');
    // a cache hit reads nothing of the context (the context line is computed only when the block is rendered)
    let reads = 0;
    const counted = new Proxy(history[1].context, { get: (target, key, receiver) => ((reads += 1), Reflect.get(target, key, receiver)) });
    history[1].context = counted;
    dialogue(history);
    const readsWhenRendered = reads;
    expect(readsWhenRendered).toBeGreaterThan(0);
    dialogue(history);
    expect(reads).toBe(readsWhenRendered);
    // the turn before moved to another district: the next turn's heading names its own place in full
    history[0].context = { ...CONTEXT, location: { ...CONTEXT.location, district: 'Maxvorstadt' } };
    expect(dialogue(history)).toContain('Turn 2 · Schwabing, Munich; 2026-05-12 13:01, driving\n');
    // the turn's own context replaced
    history[1].context = { ...CONTEXT, time: '13:05', location: { ...CONTEXT.location, district: 'Maxvorstadt' } };
    expect(dialogue(history)).toContain('Turn 2 · 13:05\n');
  });

  it('shows places as a table of what a constraint can name, with the opening hours of the turn\'s weekday', () => {
    const actions: Action[] = [{ type: 'poi_results', category: 'restaurant', pois: [poi('Trattoria Sole', 'low'), poi('Caffè Nero', 'high', 'cafe')] }];
    expect(replyData({ sessionId: 's', turn: 0, text: 'Two places.', actions }, 1500, '2026-05-12')).toEqual({
      text: 'Two places.',
      actions: [
        {
          type: 'poi_results',
          category: 'restaurant',
          columns: 'name|district|cuisine|cost|rating|hours|driveMin|category',
          pois: ['Trattoria Sole|Schwabing|italian|low|4.5|11:00-22:00|6|restaurant', 'Caffè Nero|Schwabing|italian|high|4.5|11:00-22:00|6|cafe'],
        },
      ],
    });
    // whole actions only, as many as fit; the rest are counted
    const route: Action = { type: 'route', destination: { name: 'Trattoria Sole', district: 'Schwabing' }, distanceKm: 2.1, durationMin: 6, tolls: false, highway: false, eta: '13:06' };
    expect(replyData({ sessionId: 's', turn: 0, text: 'Go.', actions: [route, ...actions] }, 200)).toMatchObject({ actions: [route], actionsOmitted: 1 });
    expect(replyData(null, 1500)).toEqual({ text: null });
  });

  it('lists the targets one a line: id, status, the request in a few words', () => {
    expect(describeTargets(TARGETS)).toBe('\ng1 [0] find_poi restaurant, cuisine italian, max_cost medium\ng2 [0] navigate to poi, avoid_tolls');
  });
});
