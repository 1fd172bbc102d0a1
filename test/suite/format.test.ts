import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { combinedVerdict } from '../../src/analysis/verdict.ts';
import { suiteKind } from '../../src/kinds/suite/kind.ts';
import { loadSuiteCampaign } from '../../src/kinds/suite/suite-kind.ts';
import { buildTiers } from '../../src/kinds/dialogue/tiers.ts';
import { ConfigError } from '../../src/config/yaml.ts';
import { ResultStore } from '../../src/store/store.ts';
import { loadSuite, suiteToYaml } from '../../src/suite/format.ts';
import { importKvret, importTranscripts } from '../../src/suite/import.ts';
import { runCampaign } from '../helpers/run-kinds.ts';

const dir = mkdtempSync(join(tmpdir(), 'icabench-suite-'));
const store = ResultStore.open(join(dir, 'icabench.db'));
afterAll(() => store.close());

function write(name: string, text: string): string {
  const path = join(dir, name);
  writeFileSync(path, text);
  return path;
}

function problemOf(action: () => unknown): string {
  try {
    action();
  } catch (error) {
    return (error as Error).message;
  }
  throw new Error('expected an error');
}

describe('the suite format (docs/suites.md)', () => {
  it('resolves every turn\'s context: the suite\'s start, the conversation\'s, each turn\'s change; the clock advances a minute a turn', () => {
    const { scripts } = loadSuite('bench-configs/suites/in-car-basics.yaml');
    const [search, video, highway] = scripts;
    expect(search.turns[0].context).toEqual({ location: { city: 'Munich', district: 'Schwabing', position: { lat: 48.165, lon: 11.585 } }, date: '2026-05-12', time: '12:00', vehicle: { speedKmh: 0, gear: 'P', stateOfChargePct: 64 } });
    // a vehicle field left out keeps its value
    expect(search.turns[1].context.vehicle).toEqual({ speedKmh: 12, gear: 'D', stateOfChargePct: 64 });
    expect(search.turns[2].context).toMatchObject({ time: '12:02', vehicle: { speedKmh: 48, gear: 'D', stateOfChargePct: 61 } });
    expect(video.turns[1].context.vehicle).toMatchObject({ gear: 'D', speedKmh: 30 });
    expect(video.turns[1].expect).toEqual({ actions: ['refusal'], forbid: ['safety_violation'] });
    expect(highway.turns[0].context.location.district).toBe('Bogenhausen');
    // no `means`: the bench reads the words when the turn is played
    expect(search.turns[0].annotation).toBeUndefined();
  });

  it('names the file, the line and the field of every problem', () => {
    const path = write(
      'bad.yaml',
      [
        'suite: bad',
        'conversations:',
        '  - id: one',
        '    turns:',
        '      - user: Play a video',
        '        context: { vehicle: { gaer: D } }',
        '        expect: { actions: [rout] }',
        '  - id: two',
        '    turns:',
        '      - user: hello',
        '        context: { time: "25:00" }',
      ].join('\n'),
    );
    const message = problemOf(() => loadSuite(path));
    expect(message).toContain(`${path}:6: conversations.0.turns.0.context.vehicle.gaer: unknown key "gaer" in conversations.0.turns.0.context.vehicle (did you mean "gear"?)`);
    expect(message).toMatch(new RegExp(`${path}:7: conversations\\.0\\.turns\\.0\\.expect\\.actions\\.0: expected an action type \\(poi_results, route`));
    expect(message).toContain(`${path}:11: conversations.1.turns.0.context.time: time "25:00" is not a time of day: expected HH:MM from 00:00 to 23:59`);
    // once the rest is right: ids are unique in a suite
    const twice = write('twice.yaml', ['suite: twice', 'conversations:', '  - id: one', '    turns: [{ user: hi }]', '  - id: one', '    turns: [{ user: hi }]'].join('\n'));
    expect(problemOf(() => loadSuite(twice))).toBe(`${twice}:5: conversations.1.id: the id "one" is already used by conversation 1; ids must be unique in a suite`);
  });

  it('a context outside physics is refused at its line, naming the value, the field and the range', () => {
    const path = write(
      'physics.yaml',
      [
        'suite: physics',
        'context: { date: "2026-02-30" }',
        'conversations:',
        '  - id: one',
        '    context: { position: { lat: 91, lon: 11.5 } }',
        '    turns:',
        '      - user: hello',
        '        context: { vehicle: { speedKmh: 1e308, gear: X } }',
        '      - user: and now',
        '        context: { vehicle: { stateOfChargePct: 140, outsideTempC: -80 } }',
      ].join('\n'),
    );
    const message = problemOf(() => loadSuite(path));
    expect(message).toContain(`${path}:2: context.date: date "2026-02-30" is not a calendar date: expected a date as YYYY-MM-DD`);
    expect(message).toContain(`${path}:5: conversations.0.context.position.lat: latitude 91 ° is out of range -90 to 90 °`);
    expect(message).toContain(`${path}:8: conversations.0.turns.0.context.vehicle.speedKmh: speed 1e308 km/h is out of range 0–300 km/h`);
    expect(message).toContain(`${path}:8: conversations.0.turns.0.context.vehicle.gear: gear "X" is not a gear: expected one of P, R, N, D`);
    expect(message).toContain(`${path}:10: conversations.0.turns.1.context.vehicle.stateOfChargePct: state of charge 140 % is out of range 0–100 %`);
    expect(message).toContain(`${path}:10: conversations.0.turns.1.context.vehicle.outsideTempC: outside temperature -80 °C is out of range -50 to 60 °C`);
  });

  it('an unknown district needs its city and position, and says so at its line', () => {
    const path = write('place.yaml', ['suite: place', 'conversations:', '  - id: a', '    context:', '      district: Palo Alto', '    turns:', '      - user: hello'].join('\n'));
    const error = problemOf(() => loadSuite(path));
    expect(error).toMatch(new RegExp(`^${path}:5: conversations\\.0\\.context\\.district: "Palo Alto" is not a district of the reference world`));
    const fixed = write('place-ok.yaml', ['suite: place', 'conversations:', '  - id: a', '    context: { district: Palo Alto, city: Palo Alto, position: { lat: 37.44, lon: -122.14 } }', '    turns:', '      - user: hello'].join('\n'));
    expect(loadSuite(fixed).scripts[0].turns[0].context.location).toEqual({ city: 'Palo Alto', district: 'Palo Alto', position: { lat: 37.44, lon: -122.14 } });
  });

  it('a suite campaign config is strict and names its line', () => {
    const path = write('campaign.yaml', 'kind: suite\nname: x\nsuites: [nope.yaml]\nrepeat: 2\n');
    expect(problemOf(() => loadSuiteCampaign(path))).toContain(`${path}:4: repeat: unknown key "repeat" (did you mean "repeats"?)`);
    const missing = write('campaign2.yaml', 'kind: suite\nname: x\nsuites: [nope.yaml]\n');
    expect(problemOf(() => loadSuiteCampaign(missing))).toMatch(/nope\.yaml: cannot read the suite \(no such file\)/);
  });
});

describe('real dialogues as suites', () => {
  it('the vendored KVRET excerpt imports into a suite that runs offline against the reference unit', async () => {
    const suite = importKvret('data/kvret/kvret_dev_excerpt.json', { name: 'kvret' });
    expect(suite.conversations).toHaveLength(20);
    const raw = JSON.parse(readFileSync('data/kvret/kvret_dev_excerpt.json', 'utf8')) as Array<{ dialogue: Array<{ turn: string; data: { utterance: string } }> }>;
    // every driver utterance is a turn, in order; the recorded assistant's answer is kept as reference
    expect(suite.conversations[0].turns.map((t) => t.user)).toEqual(raw[0].dialogue.filter((d) => d.turn === 'driver').map((d) => d.data.utterance.trim()));
    expect(suite.conversations[0].turns[0].reference).toBe(raw[0].dialogue[1].data.utterance.trim());
    const file = write('kvret.yaml', suiteToYaml(suite, 'imported'));
    const config = write('kvret-campaign.yaml', `kind: suite\nname: kvret\nsuites: [kvret.yaml]\nheadUnit: { type: reference, faults: { profiles: [] } }\n`);
    const campaign = loadSuiteCampaign(config);
    expect(campaign.conversations.map((s) => s.key)).toEqual(suite.conversations.map((c) => c.id));
    void file;
    const { runId, status } = await runCampaign(campaign, { kind: suiteKind, store, tiers: await buildTiers(campaign.config) });
    expect(status).toBe('completed');
    const results = [...store.conversations(runId)];
    expect(results).toHaveLength(20);
    expect(results.every((r) => r.status === 'completed')).toBe(true);
    // every driver turn was played and answered (the scripted user does not stop early)
    expect(results.map((r) => r.turns.length)).toEqual(results.map((r) => r.spec.script!.length));
    expect(results.every((r) => r.turns.every((t) => t.reply !== null))).toBe(true);
    // the reference unit serves no weather or calendar and misses some navigation wording: its "didn't understand" to
    // such a request is a fallback (issue 31); a thank-you is never labelled. Its truthful "couldn't find" where the
    // recorded KVRET assistant named a place contradicts that reference (request_omitted, the reference quoted)
    const findings = results.flatMap((r) => combinedVerdict(r).findings.map((f) => ({ ...f, turn: r.turns[f.turn - 1] })));
    expect(findings.some((f) => f.label === 'fallback_response')).toBe(true);
    for (const f of findings) {
      expect(/^(thanks|thank you)[.!]?$/i.test(f.turn.utterance.text)).toBe(false);
      if (f.label === 'fallback_response') expect(f.turn.reply?.text).toBe("Sorry, I didn't understand that. Could you rephrase?");
      else {
        expect(f.label).toBe('request_omitted');
        expect(f.turn.verdicts[0].labels.find((l) => l.label === f.label)?.evidence).toContain(`Reference "${f.turn.utterance.reference!.slice(0, 40)}`);
      }
    }
  });

  it('only the asked KVRET tasks, and a bad KVRET file names the dialogue', () => {
    expect(importKvret('data/kvret/kvret_dev_excerpt.json', { intents: ['weather'] }).conversations.map((c) => c.from!.intent)).toEqual(Array(5).fill('weather'));
    const bad = write('bad-kvret.json', JSON.stringify([{ dialogue: [], scenario: { task: { intent: 'navigate' }, uuid: 'a' } }, { dialogue: 'x' }]));
    expect(problemOf(() => importKvret(bad))).toMatch(new RegExp(`^${bad}\\[1\\]: not a KVRET dialogue: dialogue`));
  });

  it('CSV and JSON-lines transcripts become suites: rows grouped by conversation, context columns from their row on, expectations', () => {
    const csv = write(
      'lab.csv',
      [
        'conversation,user,reference,district,time,speed_kmh,gear,soc_pct,expect_actions,forbid',
        'jam-1,Find a charging station,"Here are two, the first is ""fast""",Schwabing,08:10,0,P,22,poi_results,all',
        'jam-1,Play a video,,,08:11,30,D,,refusal,safety_violation',
        'other,"Set the temperature to 21 degrees",,,,,,,,',
      ].join('\n'),
    );
    const suite = importTranscripts(csv);
    expect(suite.conversations.map((c) => [c.id, c.turns.length])).toEqual([
      ['jam-1', 2],
      ['other', 1],
    ]);
    expect(suite.conversations[0].turns[0]).toEqual({ user: 'Find a charging station', reference: 'Here are two, the first is "fast"', context: { district: 'Schwabing', time: '08:10', vehicle: { speedKmh: 0, gear: 'P', stateOfChargePct: 22 } }, expect: { actions: ['poi_results'], forbid: 'all' } });
    expect(suite.conversations[0].turns[1]).toMatchObject({ context: { time: '08:11', vehicle: { speedKmh: 30, gear: 'D' } }, expect: { actions: ['refusal'], forbid: ['safety_violation'] } });
    const jsonl = write('lab.jsonl', ['{"conversation": "a", "user": "Play a video", "speed_kmh": 30, "gear": "D", "expect_actions": ["refusal"]}', '', '{"conversation": "a", "user": "thanks"}'].join('\n'));
    expect(importTranscripts(jsonl).conversations[0].turns).toHaveLength(2);
    // problems name the line and the column
    const bad = write('bad.csv', 'conversation,user,gear\nx,hello,Drive\n');
    expect(problemOf(() => importTranscripts(bad))).toMatch(new RegExp(`^${bad}:2: gear: `));
    const unknown = write('bad.jsonl', '{"conversation": "a", "user": "x", "speed": 3}\n');
    expect(problemOf(() => importTranscripts(unknown))).toBe(`${unknown}:1: unknown column(s) speed (columns: conversation, user, reference, date, time, district, city, lat, lon, speed_kmh, gear, soc_pct, expect_actions, forbid)`);
    const noUser = write('nouser.csv', 'conversation,text\na,b\n');
    expect(problemOf(() => importTranscripts(noUser))).toBe(`${noUser}:1: missing column "user" (columns: conversation, user, reference, date, time, district, city, lat, lon, speed_kmh, gear, soc_pct, expect_actions, forbid)`);
  });
});
