import { describe, expect, it } from 'vitest';
import { understand } from '../../../src/world/nlu.ts';

describe('reference head unit understanding of recognised speech', () => {
  it('ends a destination at a courtesy or a route constraint when punctuation is missing', () => {
    // as pocketsphinx + pause punctuation heard "Actually, take me to Stadtapotheke. Thank you!"
    expect(understand('Actually, take me to Stadtapotheke thank you.')).toEqual([{ kind: 'navigate', to: { name: 'Stadtapotheke' }, constraints: [] }]);
    expect(understand('navigate to kreuzberg avoiding tolls')).toEqual([{ kind: 'navigate', to: { district: 'Kreuzberg' }, constraints: [{ kind: 'avoid_tolls' }] }]);
    // typed text is read as before
    expect(understand('Navigate to Bogenhausen, without highways.')).toEqual([{ kind: 'navigate', to: { district: 'Bogenhausen' }, constraints: [{ kind: 'avoid_highways' }] }]);
  });

  it('keeps a trip plan together when a pause ended the sentence before "then"', () => {
    const typed = understand('Plan a trip with stops at a pharmacy by 14:00, then a charging station, then a cheap greek restaurant by 16:00.');
    const heard = understand('Plan a trip with stops at a pharmacy by 14:00, then a charging station. Then a cheap greek restaurant by 16:00. Thanks a lot.');
    expect(heard).toEqual(typed);
    expect(heard[0]).toMatchObject({ kind: 'plan_trip', stops: [{ category: 'pharmacy', arriveBy: '14:00' }, { category: 'charger' }, { category: 'restaurant', arriveBy: '16:00' }] });
  });

  it('reads a sentence that only states a constraint as a follow-up to what was asked, in the paraphrases drivers type', () => {
    expect(understand('Only places rated 4.5 or higher.')).toEqual([{ kind: 'add_constraints', constraints: [{ kind: 'min_rating', value: 4.5 }] }]);
    expect(understand('At least 4.5 stars please.')).toEqual([{ kind: 'add_constraints', constraints: [{ kind: 'min_rating', value: 4.5 }] }]);
    expect(understand('With a rating above 4.2.')).toEqual([{ kind: 'add_constraints', constraints: [{ kind: 'min_rating', value: 4.2 }] }]);
    expect(understand('Make sure it is open until 22:00.')).toEqual([{ kind: 'add_constraints', constraints: [{ kind: 'open_at', value: '22:00' }] }]);
    expect(understand('Avoid tolls.')).toEqual([{ kind: 'add_constraints', constraints: [{ kind: 'avoid_tolls' }] }]);
    // where the car is, not what the place must meet; and a sentence with a category is not a follow-up
    expect(understand("I'm in Schwabing right now.")).toEqual([]);
    expect(understand('A cheap restaurant.')).toEqual([]);
  });
});
