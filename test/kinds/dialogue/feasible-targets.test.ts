import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { loadCampaignConfig } from '../../../src/kinds/dialogue/config.ts';
import { buildTiers } from '../../../src/kinds/dialogue/tiers.ts';
import { runConversation } from '../../../src/kinds/dialogue/conversation.ts';
import type { ConversationResult } from '../../../src/domain/conversation.ts';
import type { ContextVector } from '../../../src/domain/context.ts';
import type { ConnectedHeadUnit } from '../../../src/run/connect.ts';
import { InProcessHeadUnit } from '../../../src/headunit/in-process.ts';
import { ReferenceHeadUnit } from '../../../src/headunit/reference/reference-headunit.ts';
import type { HeadUnitHandler, HeadUnitReplyBody } from '../../../src/headunit/types.ts';
import { OracleJudge } from '../../../src/judge/oracle.ts';
import type { Poi } from '../../../src/protocol/bridge.ts';
import { TemplateSimulator } from '../../../src/simulator/template.ts';
import { placesMeeting } from '../../../src/world/feasibility.ts';
import { World } from '../../../src/world/world.ts';
import { specFor, tempStore as tempStoreIn } from './helpers.ts';
import { runCampaign } from '../../helpers/run-kinds.ts';

const cleanups: Array<() => void> = [];
afterEach(() => {
  while (cleanups.length) cleanups.pop()!();
});

/** No place in the reference world meets this: Spandau's cheap charger is rated 3.8, its 4.5-rated one is not cheap. */
const IMPOSSIBLE_SEED = `seeds:
  - id: cheap-good-charger-spandau
    text: A cheap charging station in Spandau rated at least 4.
    city: Berlin
    requests:
      - { intent: find_poi, category: charger, constraints: [{ kind: district, value: Spandau }, { kind: max_cost, value: low }, { kind: min_rating, value: 4 }] }
`;

function campaignDir(extra = '', worldFile?: string): string {
  const dir = mkdtempSync(join(tmpdir(), 'icabench-feasible-'));
  writeFileSync(join(dir, 'seeds.yaml'), IMPOSSIBLE_SEED);
  if (worldFile) writeFileSync(join(dir, 'world.yaml'), worldFile);
  writeFileSync(join(dir, 'campaign.yaml'), `name: impossible\nmode: baseline\nseeds: seeds.yaml\nconversations: 1\nmaxTurns: [4]\nconcurrency: 1\n${extra}`);
  return join(dir, 'campaign.yaml');
}

function inProcess(handler: HeadUnitHandler): ConnectedHeadUnit {
  return { connection: new InProcessHeadUnit(handler), bridge: null, reference: null, ensureReady: async () => undefined, close: async () => undefined };
}

/** The reference unit, except that a search it cannot serve is answered with `invent(...)` instead of "not found". */
function lyingUnit(invent: (reference: ReferenceHeadUnit) => Poi): HeadUnitHandler {
  const reference = new ReferenceHeadUnit();
  return {
    unit: { name: 'liar', version: '1' },
    capabilities: reference.capabilities,
    startSession: (id: string, context: ContextVector) => reference.startSession(id, context),
    endSession: (id: string) => reference.endSession(id),
    async handleTurn(id: string, turn: number, text: string, context: ContextVector): Promise<HeadUnitReplyBody> {
      const body = await reference.handleTurn(id, turn, text, context);
      if (!body.actions.some((a) => a.type === 'refusal' && a.reason === 'not_found')) return body;
      const place = invent(reference);
      return { text: `${place.name} is cheap and rated ${place.rating}.`, actions: [{ type: 'poi_results', category: 'charger', pois: [place] }] };
    },
  };
}

async function runOne(configPath: string, handler: HeadUnitHandler): Promise<ConversationResult> {
  const loaded = loadCampaignConfig(configPath);
  const store = tempStoreIn((close) => cleanups.push(close));
  const result = await runCampaign(loaded, { store, tiers: await buildTiers(loaded.config), headUnit: inProcess(handler) });
  const [conversation] = [...store.conversations(result.runId)];
  return conversation;
}

const labelsOf = (c: ConversationResult) => c.turns.flatMap((t) => t.verdicts.flatMap((v) => v.labels));

describe('a campaign with an impossible constraint', () => {
  it('a truthful "not found" completes the target the simulator marked "none exists": no label, T = 1', async () => {
    const conversation = await runOne(campaignDir(), new ReferenceHeadUnit());
    const first = conversation.turns[0];
    expect(first.targetsAfter).toEqual([expect.objectContaining({ id: 't1', status: 1, expectedOutcome: 'none_exists' })]);
    expect(first.reply!.actions).toContainEqual({ type: 'refusal', reason: 'not_found' });
    expect(labelsOf(conversation)).toEqual([]);
    const verdict = conversation.verdicts.find((v) => v.judge === 'oracle')!;
    expect(verdict.completedShare).toBe(1);
    expect(verdict.pass).toBe(true);
  });

  it('a made-up place offered as the match is labelled constraint_missed as a fabricated result', async () => {
    const conversation = await runOne(
      campaignDir(),
      lyingUnit((reference) => ({ ...reference.world.pois.find((p) => p.name === 'City Charger Spandau')!, id: 'invented-1', name: 'Spandau SuperCharge', rating: 4.8 })),
    );
    const labels = labelsOf(conversation);
    expect(labels.length).toBeGreaterThanOrEqual(1);
    expect(labels[0]).toMatchObject({ label: 'constraint_missed', targetId: 't1' });
    expect(labels[0].evidence).toBe(
      'Spandau SuperCharge (Spandau) does not exist in the world: a fabricated result. No place in the world meets in Spandau, cost at most low, rating at least 4: "not found" was the truthful answer.',
    );
    expect(conversation.turns[0].targetsAfter[0]).toMatchObject({ status: 0, expectedOutcome: 'none_exists' });
  });

  it('a real place whose attributes the reply misstates to fit is judged on the world record, and labelled', async () => {
    const conversation = await runOne(
      campaignDir(),
      lyingUnit((reference) => ({ ...reference.world.pois.find((p) => p.name === 'City Charger Spandau')!, rating: 4.6 })),
    );
    const [label] = labelsOf(conversation);
    expect(label).toMatchObject({ label: 'constraint_missed', targetId: 't1' });
    expect(label.evidence).toMatch(/^City Charger Spandau breaks: rating at least 4 \(by the world's record, whatever the reply claims\)\. No place in the world meets/);
  });

  it('the world file a campaign names is the world of the unit, the simulator and the oracle: there a match exists and is found', async () => {
    // one cheap charger in Spandau rated 4.2: in this world the same request can be met
    const world = `pois:
  - { id: w1, name: Spandau Volt, category: charger, city: Berlin, district: Spandau, position: { lat: 52.535, lon: 13.2 }, cost: low, rating: 4.2, openingHours: { monday: "00:00-23:59", tuesday: "00:00-23:59", wednesday: "00:00-23:59", thursday: "00:00-23:59", friday: "00:00-23:59", saturday: "00:00-23:59", sunday: "00:00-23:59" } }
`;
    const loaded = loadCampaignConfig(campaignDir('world: world.yaml\n', world));
    const store = tempStoreIn((close) => cleanups.push(close));
    const result = await runCampaign(loaded, { store, log: () => undefined });
    const [conversation] = [...store.conversations(result.runId)];
    const first = conversation.turns[0];
    expect(first.targetsAfter[0]).toMatchObject({ status: 1 });
    expect(first.targetsAfter[0].expectedOutcome).toBeUndefined();
    expect(first.reply!.actions).toContainEqual(expect.objectContaining({ type: 'poi_results', pois: [expect.objectContaining({ id: 'w1', name: 'Spandau Volt' })] }));
    expect(labelsOf(conversation)).toEqual([]);
  });
});

describe('the template simulator knows which searches its world can serve', () => {
  it('marks exactly the targets no place meets (constraint stacking creates some on purpose), over 70 guided conversations', async () => {
    const world = new World(1);
    const unit = new InProcessHeadUnit(new ReferenceHeadUnit());
    const simulator = new TemplateSimulator({ world });
    let marked = 0;
    let checked = 0;
    // every seed thrice, and the seed where stacking "rated at least 4" onto a cheap charger leaves nothing (index 11) more often
    const plan = [...Array.from({ length: 54 }, (_, i) => i), ...Array.from({ length: 16 }, (_, k) => 11 + 18 * (3 + k))];
    for (const i of plan) {
      const spec = specFor(i, 'guided');
      const result = await runConversation({ spec, openSession: (ctx) => unit.openSession(spec.key, ctx), simulator, judges: [new OracleJudge(undefined, undefined, world)] });
      for (const turn of result.turns) {
        for (const target of turn.targetsAfter) {
          if (target.request.intent !== 'find_poi' || target.request.constraints.length === 0) continue;
          const { location, date, time } = turn.context;
          const none = placesMeeting(world, target.request.category, target.request.constraints, { city: location.city, position: location.position, date, time }).length === 0;
          checked += 1;
          expect(target.expectedOutcome === 'none_exists', `${spec.key} turn ${turn.index} ${target.id}`).toBe(none);
          if (none) marked += 1;
        }
      }
    }
    expect(checked).toBeGreaterThan(100);
    expect(marked).toBeGreaterThan(0);
  });
});
