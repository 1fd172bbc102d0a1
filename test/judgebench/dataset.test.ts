import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { isOpenAt, parseDatasetJsonl, readDataset, toJsonl, withoutPreferences, weekdayOf, type Pair, type Recommendation } from '../../src/judgebench/dataset.ts';
import { ERROR_FIELDS, USER_LOCATIONS, generateDataset } from '../../src/judgebench/generator.ts';
import { COST_PHRASES, CUISINE_VARIANTS, MENUS, RATING_PHRASES, UTTERANCE_TEMPLATES, ratingPhrase, readPreferences } from '../../src/judgebench/lexicon.ts';
import { oracleVerdict } from '../../src/judgebench/oracle.ts';
import { estimateDrive } from '../../src/world/geo.ts';

const fixture = (name: string) => fileURLToPath(new URL(`./fixtures/${name}`, import.meta.url));

describe('dataset generator', () => {
  const pairs = generateDataset({ seed: 42 });

  it('is deterministic from the seed', () => {
    expect(toJsonl(generateDataset({ seed: 42 }))).toBe(toJsonl(pairs));
    expect(toJsonl(generateDataset({ seed: 43 }))).not.toBe(toJsonl(pairs));
  });

  it('makes 100 user blocks × (1 correct + 5 single-error) pairs by default', () => {
    expect(pairs).toHaveLength(600);
    for (const category of ['none', 'location', 'time', 'cuisine', 'cost', 'rating']) {
      expect(pairs.filter((p) => p.error_category === category)).toHaveLength(100);
    }
    expect(new Set(pairs.map((p) => p.id)).size).toBe(600);
  });

  it('breaks exactly the named constraint in every wrong pair, and none in the correct ones', () => {
    for (const pair of pairs) {
      const verdict = oracleVerdict(pair);
      expect(verdict.violations).toEqual(pair.error_category === 'none' ? [] : [pair.error_category]);
    }
  });

  it('draws users from the 10 Berlin/Munich locations, dates in 2024 and times 08:00–22:00', () => {
    const descriptions = new Set<string>(USER_LOCATIONS.map((l) => l.description));
    for (const { user } of pairs) {
      expect(descriptions.has(user.location.description)).toBe(true);
      expect(user.date.startsWith('2024-')).toBe(true);
      expect(user.time >= '08:00' && user.time <= '22:00').toBe(true);
      expect(user.preferences!.rating.value).toBeGreaterThan(3.5);
    }
    expect(USER_LOCATIONS).toHaveLength(10);
  });

  it('takes drive times from the bench road model', () => {
    for (const { user, system } of pairs.slice(0, 60)) {
      const drive = estimateDrive({ lat: user.location.latitude, lon: user.location.longitude }, { lat: system.location.latitude, lon: system.location.longitude });
      expect(system.duration_min).toBeCloseTo(drive.durationMin, 1);
      expect(system.distance_km).toBeCloseTo(drive.distanceKm, 1);
    }
  });

  it('writes utterances the lexicon reads back to the structured preferences', () => {
    for (const { user } of pairs) expect(readPreferences(user.utterance)).toEqual(user.preferences);
  });

  it('has 20 cuisines × 5 variants and 15 paraphrases per cost level', () => {
    expect(Object.keys(CUISINE_VARIANTS)).toHaveLength(20);
    for (const variants of Object.values(CUISINE_VARIANTS)) expect(new Set(variants).size).toBe(5);
    for (const phrases of Object.values(COST_PHRASES)) expect(new Set(phrases).size).toBe(15);
  });

  it('can leave out the structured preferences', () => {
    const bare = generateDataset({ seed: 42, users: 2, includePreferences: false });
    expect(bare.every((p) => !('preferences' in p.user))).toBe(true);
    expect(bare.map((p) => p.user.utterance)).toEqual(pairs.slice(0, 12).map((p) => p.user.utterance));
  });
});

describe('dataset format', () => {
  const line = (pair: Pair) => JSON.stringify(pair);
  const [first, second] = generateDataset({ seed: 5, users: 1 });

  it('round-trips through JSONL and ignores unknown fields', () => {
    const withExtra = JSON.stringify({ ...first, provenance: 'hand', user: { ...first.user, mood: 'hungry' } });
    const parsed = parseDatasetJsonl(`${withExtra}\n\n${line(second)}\n`, 'x.jsonl');
    expect(parsed).toEqual([first, second]);
    expect(parsed[0]).not.toHaveProperty('provenance');
  });

  it('names the line and field of a missing required value', () => {
    const { duration_min: _gone, ...system } = second.system;
    const text = `${line(first)}\n${JSON.stringify({ ...second, system })}\n`;
    expect(() => parseDatasetJsonl(text, 'bad.jsonl')).toThrow(/bad\.jsonl:2: system\.duration_min/);
  });

  it('rejects invalid JSON, a label that contradicts the category, bad hours and duplicate ids, naming the line', () => {
    expect(() => parseDatasetJsonl('{"id": ', 'a.jsonl')).toThrow(/a\.jsonl:1: not valid JSON/);
    expect(() => parseDatasetJsonl(JSON.stringify({ ...first, label: false }), 'b.jsonl')).toThrow(/b\.jsonl:1: label/);
    const badHours = { ...first, system: { ...first.system, opening_hours: { ...first.system.opening_hours, monday: '9-17' } } };
    expect(() => parseDatasetJsonl(JSON.stringify(badHours), 'c.jsonl')).toThrow(/c\.jsonl:1: system\.opening_hours\.monday: expected "HH:MM-HH:MM" or "closed"/);
    expect(() => parseDatasetJsonl(`${line(first)}\n${line(first)}`, 'd.jsonl')).toThrow(/d\.jsonl:2: id: .* already used on line 1/);
  });

  it('reads the documented-format fixture files', () => {
    expect(readDataset(fixture('edge-cases.jsonl')).length).toBeGreaterThan(10);
    expect(readDataset(fixture('utterance-paraphrases.jsonl')).every((p) => p.user.preferences === undefined)).toBe(true);
    expect(() => readDataset(fixture('missing.jsonl'))).toThrow(/cannot read the judge-bench dataset \(no such file\)/);
  });

  it('strips preferences for utterance-only copies without touching the originals', () => {
    const bare = withoutPreferences([first]);
    expect(bare[0].user.preferences).toBeUndefined();
    expect(first.user.preferences).toBeDefined();
  });

  it('computes weekdays and opening hours, including spans past midnight', () => {
    expect(weekdayOf('2024-03-15')).toBe('friday');
    const hours = { monday: 'closed', tuesday: 'closed', wednesday: 'closed', thursday: 'closed', friday: '18:00-02:00', saturday: '12:00-22:00', sunday: 'closed' };
    expect(isOpenAt(hours, '2024-03-15', '23:00')).toBe(true);
    expect(isOpenAt(hours, '2024-03-16', '01:59')).toBe(true);
    expect(isOpenAt(hours, '2024-03-16', '02:00')).toBe(false);
    expect(isOpenAt(hours, '2024-03-15', '17:59')).toBe(false);
    expect(isOpenAt({ ...hours, friday: '10:00-24:00' }, '2024-03-15', '23:59')).toBe(true);
  });

  it('keeps fixtures in the documented format (every line is a JSON object with the required keys)', () => {
    for (const name of ['edge-cases.jsonl', 'utterance-paraphrases.jsonl']) {
      for (const text of readFileSync(fixture(name), 'utf8').trim().split('\n')) {
        expect(Object.keys(JSON.parse(text))).toEqual(expect.arrayContaining(['id', 'user', 'system', 'label', 'error_category']));
      }
    }
  });
});

describe('error cases as Habicht et al. build them (Algorithm 3)', () => {
  const pairs = generateDataset({ seed: 42 });
  const correctOf = (pair: Pair) => pairs.find((p) => p.id === pair.id.replace(/-\w+$/, '-none'))!;
  const differingFields = (a: Recommendation, b: Recommendation) =>
    (Object.keys(a) as (keyof Recommendation)[]).filter((key) => JSON.stringify(a[key]) !== JSON.stringify(b[key]));

  it('changes, in every error case, only the parameters of its error and leaves the rest as in the correct case', () => {
    for (const pair of pairs.filter((p) => p.error_category !== 'none')) {
      const category = pair.error_category as Exclude<typeof pair.error_category, 'none'>;
      const changed = differingFields(correctOf(pair).system, pair.system);
      expect(changed.length).toBeGreaterThan(0);
      expect(ERROR_FIELDS[category]).toEqual(expect.arrayContaining(changed));
    }
    // what used to differ in 95–100 % of the pairs now never differs outside a location error
    const wrong = pairs.filter((p) => p.error_category !== 'none');
    expect(wrong.filter((p) => p.system.name !== correctOf(p).system.name)).toHaveLength(0);
  });

  it('a worked case: u0001 of seed 5, whose time error closes the request day and keeps the other six days', () => {
    const own = generateDataset({ seed: 5, users: 1 });
    const [correct, location, time, cuisine, cost, rating] = own;
    expect(own.map((p) => p.error_category)).toEqual(['none', 'location', 'time', 'cuisine', 'cost', 'rating']);
    // "I need a place for something Lebanese: for a tight budget, with approximately 4.0 stars." on Wednesday 2024-10-09, 11:00
    expect([correct.user.date, correct.user.time, correct.user.preferences]).toEqual(['2024-10-09', '11:00', { cuisine: 'Lebanese', cost: 'low', rating: { relation: 'around', value: 4 } }]);
    const day = weekdayOf(correct.user.date);
    expect(day).toBe('wednesday');
    // the correct case: Corner Terrace, 1 minute away, Lebanese, low, 4.2 (within 4.0 ± 0.2), open 08:00-16:30 that day
    expect(correct.system).toMatchObject({ name: 'Corner Terrace', duration_min: 1, cuisine_type: 'Lebanese', cost: 'low', rating: 4.2 });
    expect(correct.system.opening_hours.wednesday).toBe('08:00-16:30');
    expect(time.system.opening_hours.wednesday).toBe('07:00-10:00'); // closed again an hour before the request
    expect([location.system.duration_min, cuisine.system.cuisine_type, cost.system.cost, rating.system.rating]).toEqual([26.2, 'German', 'medium', 4.5]);
    expect(isOpenAt(correct.system.opening_hours, correct.user.date, correct.user.time)).toBe(true);
    // time: only the request's weekday changes, and the place is closed at the request time
    expect(differingFields(correct.system, time.system)).toEqual(['opening_hours']);
    const { [day]: before, ...otherDaysBefore } = correct.system.opening_hours;
    const { [day]: after, ...otherDaysAfter } = time.system.opening_hours;
    expect(after).not.toBe(before);
    expect(otherDaysAfter).toEqual(otherDaysBefore);
    expect(isOpenAt(time.system.opening_hours, correct.user.date, correct.user.time)).toBe(false);
    // location: the place moves beyond the 15-minute drive, under the same name
    expect(differingFields(correct.system, location.system)).toEqual(['location', 'distance_km', 'duration_min']);
    expect(location.system.name).toBe(correct.system.name);
    expect(correct.system.duration_min).toBeLessThanOrEqual(15);
    expect(location.system.duration_min).toBeGreaterThan(15);
    // cuisine (with its menu), cost and rating: one field each
    expect(differingFields(correct.system, cuisine.system)).toEqual(['cuisine_type', 'menu']);
    expect(cuisine.system.menu).toEqual(MENUS[cuisine.system.cuisine_type]);
    expect(differingFields(correct.system, cost.system)).toEqual(['cost']);
    expect(differingFields(correct.system, rating.system)).toEqual(['rating']);
  });
});

describe('utterance templates', () => {
  it('has 30 templates, each one read back to its preferences with every cuisine variant, cost phrase and rating phrase', () => {
    expect(new Set(UTTERANCE_TEMPLATES).size).toBe(30);
    const fill = (template: string, variant: string, cost: string, rating: string) => template.replace('{cuisine}', variant).replace('{cost}', cost).replace('{rating}', rating);
    for (const template of UTTERANCE_TEMPLATES) {
      for (const [cuisine, variants] of Object.entries(CUISINE_VARIANTS)) {
        for (const variant of variants) expect(readPreferences(fill(template, variant, 'cheap', 'rated at least 4.0')), `${template} / ${variant}`).toEqual({ cuisine, cost: 'low', rating: { relation: 'at_least', value: 4 } });
      }
      for (const [cost, phrases] of Object.entries(COST_PHRASES)) {
        for (const phrase of phrases) expect(readPreferences(fill(template, 'sushi', phrase, 'rated around 4.2')).cost, `${template} / ${phrase}`).toBe(cost);
      }
      for (const [relation, phrases] of Object.entries(RATING_PHRASES)) {
        for (const phrase of phrases) expect(readPreferences(fill(template, 'tapas', 'mid-range', ratingPhrase(phrase, 3.8))).rating, `${template} / ${phrase}`).toEqual({ relation, value: 3.8 });
      }
    }
  });
});
