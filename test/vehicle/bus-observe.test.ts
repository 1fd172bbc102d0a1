import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { combinedVerdict } from '../../src/analysis/verdict.ts';
import type { ConversationResult } from '../../src/domain/conversation.ts';
import { loadCampaignConfig, type LoadedCampaign } from '../../src/kinds/dialogue/config.ts';
import { runCampaign } from '../../src/kinds/dialogue/run.ts';
import { RUN_FACTS, readRunFacts } from '../../src/run/run-facts.ts';
import type { ResultStore } from '../../src/store/store.ts';
import { tempStore } from '../engine/helpers.ts';

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
