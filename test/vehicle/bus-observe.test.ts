import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { combinedVerdict } from '../../src/analysis/verdict.ts';
import type { ConversationResult } from '../../src/domain/conversation.ts';
import { loadCampaignConfig, type LoadedCampaign } from '../../src/kinds/dialogue/config.ts';
import { runCampaign } from '../helpers/run-kinds.ts';
import { writeRunOutputs } from '../../src/report/write.ts';
import { RUN_FACTS, readRunFacts } from '../../src/run/run-facts.ts';
import type { ResultStore } from '../../src/store/store.ts';
import { tempStore } from '../kinds/dialogue/helpers.ts';

/**
 * Issue #32 end to end: the reference unit sends its actions as SLCAN frames into one end of a pseudo-terminal
 * pair (socat), the bench listens on the other end and judges what it sees there.
 */
const dir = mkdtempSync(join(tmpdir(), 'icabench-bus-observe-'));
const unitEnd = join(dir, 'unit');
const benchEnd = join(dir, 'bench');
let socat: ChildProcess | null = null;
const closers: Array<() => void> = [];

beforeAll(async () => {
  if (spawnSync('socat', ['-V'], { stdio: 'ignore' }).error) throw new Error('socat is not installed: run scripts/setup-system.sh (Debian package socat)');
  socat = spawn('socat', [`pty,raw,echo=0,link=${unitEnd}`, `pty,raw,echo=0,link=${benchEnd}`], { stdio: 'ignore' });
  for (let i = 0; i < 100 && !(existsSync(unitEnd) && existsSync(benchEnd)); i++) await new Promise((r) => setTimeout(r, 50));
  expect(existsSync(unitEnd) && existsSync(benchEnd)).toBe(true);
});

afterAll(() => {
  closers.forEach((close) => close());
  socat?.kill();
});

type Unit = { announces: boolean; bus: boolean; unitFaults?: string[]; busFaults?: string[]; busRate?: number };

/** The shipped bus-observe campaign with the test's serial pair, small. */
function campaign(unit: Unit, conversations: number, windowMs: number): LoadedCampaign {
  const loaded = loadCampaignConfig('bench-configs/bus-observe.yaml');
  const config = loaded.config;
  config.conversations = conversations;
  const vehicle = config.vehicle!;
  if (unit.bus) vehicle.observe = { ...vehicle.observe!, transport: { kind: 'slcan', path: benchEnd }, windowMs };
  else delete vehicle.observe;
  if (config.headUnit.type !== 'reference') throw new Error('expected the reference unit');
  config.headUnit.structuredActions = unit.announces;
  config.headUnit.faults = { ...config.headUnit.faults, profiles: (unit.unitFaults ?? ['unsafe_compliance', 'omit_request', 'over_refusal']) as never };
  if (unit.bus) config.headUnit.bus = { transport: { kind: 'slcan', path: unitEnd }, mapping: 'icabench_vehicle-actions', faults: { profiles: (unit.busFaults ?? []) as never, rate: unit.busRate ?? 0.5, seed: 9 } };
  else delete config.headUnit.bus;
  return loaded;
}

async function run(unit: Unit, conversations: number, windowMs = 300): Promise<{ results: ConversationResult[]; store: ResultStore; runId: string }> {
  const store = tempStore((close) => closers.push(close));
  const { runId } = await runCampaign(campaign(unit, conversations, windowMs), { store });
  return { results: [...store.conversations(runId)], store, runId };
}

const turnLabels = (results: ConversationResult[]) => results.map((r) => r.turns.map((t) => t.verdicts[0].labels.map((l) => l.label).sort()));

describe('a text-only unit judged from the bus', () => {
  it('gets the same verdicts from its SLCAN frames as the same campaign gets from announced actions', async () => {
    const announced = await run({ announces: true, bus: false }, 8);
    const onBus = await run({ announces: false, bus: true }, 8);
    expect(onBus.results.map((r) => r.status)).toEqual(announced.results.map(() => 'completed'));
    // the same conversations (the same utterances)...
    expect(onBus.results.map((r) => r.turns.map((t) => t.utterance.text))).toEqual(announced.results.map((r) => r.turns.map((t) => t.utterance.text)));
    // ...with no action in any reply, judged from the bus alone
    expect(onBus.results.flatMap((r) => r.turns).every((t) => t.reply!.actions.length === 0 && t.observed !== undefined)).toBe(true);
    expect(turnLabels(onBus.results)).toEqual(turnLabels(announced.results));
    expect(onBus.results.map((r) => combinedVerdict(r).outcome)).toEqual(announced.results.map((r) => combinedVerdict(r).outcome));
    expect(onBus.results.map((r) => r.verdicts[0].score)).toEqual(announced.results.map((r) => r.verdicts[0].score));
    // not a trivial agreement: failures were found, and turns were decided, on the bus
    const found = new Set(turnLabels(onBus.results).flat(2));
    expect(found.has('safety_violation') || found.has('request_omitted') || found.has('fallback_response')).toBe(true);
    expect(onBus.results.flatMap((r) => r.turns).filter((t) => t.verdicts[0].outcome === 'judged').length).toBeGreaterThan(10);
    // the channel is recorded once as a run fact
    const [fact] = readRunFacts(onBus.store, onBus.runId, RUN_FACTS.vehicleObserve);
    expect(fact).toMatchObject({ mapping: 'icabench_vehicle-actions', windowMs: 300, transport: expect.stringContaining('SLCAN') });
    expect(fact.carries).toContain('climate_setpoint');
  }, 120_000);
});

/** Turns where a fault fired (the reference unit's ground truth), with the deciding labels and their evidence. */
function firedTurns(results: ConversationResult[], profile: string) {
  return results.flatMap((r) => r.turns).filter((t) => t.reply?.diagnostics?.faults.some((f) => f.profile === profile));
}

describe('each finding on the bus, from a unit that fails it there', () => {
  it('text-only: a command never sent is request_omitted, a wrong value constraint_missed, an unsafe command safety_violation; the evidence shows the decoded frames', async () => {
    const { results, store, runId } = await run({ announces: false, bus: true, unitFaults: ['unsafe_compliance'], busFaults: ['bus_silent', 'bus_wrong_value'], busRate: 0.5 }, 6, 400);
    const expectFound = (profile: string, label: string, evidence: RegExp) => {
      const turns = firedTurns(results, profile);
      expect(turns.length, profile).toBeGreaterThan(0);
      for (const turn of turns) {
        const found = turn.verdicts[0].labels.find((l) => l.label === label);
        expect(found, `${profile} on "${turn.utterance.text}"`).toBeDefined();
        expect(found!.evidence).toMatch(evidence);
      }
    };
    expectFound('bus_silent', 'request_omitted', /Nothing on the bus within 400 ms/);
    // 21 °C asked, 69.8 on the bus (the unit sent °F): the frame with its id, bytes and decoded signals
    expectFound('bus_wrong_value', 'constraint_missed', /Seen on the bus: (climate_setpoint = [\d.]+ \(HU_CLIMATE_REQUEST 0x500#[0-9A-F]{2} Setpoint=[\d.]+|media_source = \w+ \(HU_MEDIA_REQUEST 0x510#[0-9A-F]{2} Source=[A-Z]+)/);
    expectFound('unsafe_compliance', 'safety_violation', /Seen on the bus: (vehicle_control|media_source = video).*0x5[1-5]0#/);
    // the report shows, under each reply, what the bus showed
    const out = join(dir, 'report');
    await writeRunOutputs(store, runId, out, { unit: 'the built-in reference head unit', faults: null });
    const html = readFileSync(join(out, 'report.html'), 'utf8');
    expect(html).toMatch(/on the bus: climate_setpoint = [\d.]+ \(HU_CLIMATE_REQUEST 0x500#[0-9A-F]{2} Setpoint=/);
    expect(html).toContain('nothing on the bus within 400 ms');
    // the turn records keep what was seen, frame by frame
    const observed = results.flatMap((r) => r.turns).flatMap((t) => t.observed?.actions ?? []);
    expect(observed.some((a) => a.kind === 'climate_setpoint' && a.frame.message === 'HU_CLIMATE_REQUEST' && /^[0-9A-F]{2}$/.test(a.frame.data))).toBe(true);
  }, 120_000);

  it('a unit that announces one thing and sends another (or nothing) is action_misreported, beside what the bus shows it did', async () => {
    const { results } = await run({ announces: true, bus: true, unitFaults: [], busFaults: ['bus_silent', 'bus_wrong_value'], busRate: 0.5 }, 6, 400);
    for (const profile of ['bus_silent', 'bus_wrong_value']) {
      const turns = firedTurns(results, profile);
      expect(turns.length, profile).toBeGreaterThan(0);
      for (const turn of turns) {
        const labels = turn.verdicts[0].labels;
        const misreported = labels.find((l) => l.label === 'action_misreported');
        expect(misreported, `${profile} on "${turn.utterance.text}"`).toBeDefined();
        expect(misreported!.evidence).toMatch(profile === 'bus_silent' ? /announced .*, but the bus carried no \w+ frame within 400 ms/ : /announced .*, but the bus shows .*0x5[01]0#[0-9A-F]{2}/);
        expect(labels.map((l) => l.label)).toContain(profile === 'bus_silent' ? 'request_omitted' : 'constraint_missed');
      }
    }
    // where no fault fired, what was announced is what the bus shows: no misreport
    const clean = results.flatMap((r) => r.turns).filter((t) => !t.reply?.diagnostics?.faults.length);
    expect(clean.length).toBeGreaterThan(0);
    expect(clean.flatMap((t) => t.verdicts[0].labels).filter((l) => l.label === 'action_misreported')).toEqual([]);
  }, 120_000);
});
