import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { compareRuns } from '../../src/analysis/compare.ts';
import { combinedVerdict, turnLabels } from '../../src/analysis/verdict.ts';
import type { ContextVector } from '../../src/domain/context.ts';
import type { ConversationResult } from '../../src/domain/conversation.ts';
import { REFERENCE_REPLIES } from '../../src/domain/vocabulary.ts';
import { InProcessHeadUnit } from '../../src/headunit/in-process.ts';
import { ReferenceHeadUnit } from '../../src/headunit/reference/reference-headunit.ts';
import type { HeadUnitHandler, HeadUnitReplyBody } from '../../src/headunit/types.ts';
import { asksSomething } from '../../src/judge/fallback.ts';
import { NO_GROUNDS } from '../../src/judge/grounds.ts';
import { runCampaign } from '../helpers/run-kinds.ts';
import { buildTiers } from '../../src/kinds/dialogue/tiers.ts';
import { suiteKind } from '../../src/kinds/suite/kind.ts';
import { loadSuiteCampaign } from '../../src/kinds/suite/suite-kind.ts';
import { JunitWriter } from '../../src/report/junit.ts';
import { summarizeRun } from '../../src/report/summary.ts';
import type { ConnectedHeadUnit } from '../../src/run/connect.ts';
import { ResultStore } from '../../src/store/store.ts';
import { suiteToYaml } from '../../src/suite/format.ts';
import { importTranscripts } from '../../src/suite/import.ts';
import { pinConversation, pinnedSuiteYaml } from '../../src/suite/pin.ts';
import { runCli } from '../helpers/cli.ts';

const dir = mkdtempSync(join(tmpdir(), 'icabench-undecided-'));
const store = ResultStore.open(join(dir, 'icabench.db'));
afterAll(() => store.close());

function write(name: string, text: string): string {
  const path = join(dir, name);
  writeFileSync(path, text);
  return path;
}

/** A test unit that answers every turn with the same words and no action (it announces structured actions, as the reference unit does). */
class FixedReplyUnit implements HeadUnitHandler {
  readonly unit = { name: 'fixed-reply', version: '1' };
  private readonly inner = new ReferenceHeadUnit();
  readonly capabilities = this.inner.capabilities;

  constructor(private readonly text: string) {}

  startSession(sessionId: string, context: ContextVector) {
    return this.inner.startSession(sessionId, context);
  }

  endSession(sessionId: string) {
    return this.inner.endSession(sessionId);
  }

  async handleTurn(): Promise<HeadUnitReplyBody> {
    return { text: this.text, actions: [] };
  }
}

const connected = (handler: HeadUnitHandler): ConnectedHeadUnit => ({ connection: new InProcessHeadUnit(handler), bridge: null, reference: null, ensureReady: async () => undefined, close: async () => undefined });
const FALLBACK = "Sorry, I didn't understand that. Could you rephrase?";

/** Runs the suites as a `kind: suite` campaign against `unit` (the reference unit without faults when absent). */
async function runSuites(name: string, suites: string[], unit?: HeadUnitHandler): Promise<{ runId: string; results: ConversationResult[] }> {
  const config = write(`${name}.yaml`, `kind: suite\nname: ${name}\nsuites: [${suites.join(', ')}]\nheadUnit: { type: reference, faults: { profiles: [] } }\n`);
  const campaign = loadSuiteCampaign(config);
  const { runId, status } = await runCampaign(campaign, { kind: suiteKind, store, tiers: await buildTiers(campaign.config), ...(unit ? { headUnit: connected(unit) } : {}) });
  expect(status).toBe('completed');
  const results = [...store.conversations(runId)];
  expect(results.every((r) => r.status === 'completed')).toBe(true);
  return { runId, results };
}

/** The turns labelled fallback_response (by the verdict that counts on the turn). */
const fallbackLabels = (results: readonly ConversationResult[]) => results.flatMap((r) => r.turns.filter((t) => turnLabels(t).some((l) => l.label === 'fallback_response')));

describe('a unit that answers every turn with a fallback never passes a suite (issue 31)', () => {
  it('the KVRET excerpt: every conversation fails by its fallback findings', async () => {
    const { results } = await runSuites('kvret-fallback', [resolve('bench-configs/suites/kvret-excerpt.yaml')], new FixedReplyUnit(FALLBACK));
    expect(results).toHaveLength(20);
    for (const result of results) {
      const verdict = combinedVerdict(result);
      expect(verdict.outcome, result.spec.key).toBe('fail');
      // one finding per turn that asked for something; "Thanks." asked for nothing
      const asking = result.turns.filter((t) => asksSomething(t.utterance.text)).map((t) => t.index + 1);
      expect(verdict.findings.map((f) => f.turn)).toEqual(asking);
      expect(new Set(verdict.findings.map((f) => f.label))).toEqual(new Set(['fallback_response']));
    }
  });

  it('a transcript import: every conversation fails, recognised requests and unrecognised ones alike', async () => {
    const csv = write(
      'lab.csv',
      ['conversation,user,reference', 'a,Find a cheap italian restaurant in Schwabing,Trattoria Schwabing is 1 km away', 'a,Thanks!,You are welcome', 'b,Is it going to snow tomorrow?,No snow tomorrow', 'c,Wie spät ist es in Tokio?,Es ist 20 Uhr'].join('\n'),
    );
    const suite = write('lab-suite.yaml', suiteToYaml(importTranscripts(csv, { name: 'lab' }), 'imported'));
    const { results } = await runSuites('import-fallback', [suite], new FixedReplyUnit(FALLBACK));
    expect(results.map((r) => [r.spec.key, combinedVerdict(r).outcome])).toEqual([
      ['a', 'fail'],
      ['b', 'fail'],
      ['c', 'fail'],
    ]);
  });

  it('a pinned suite: the reference unit\'s passing conversations, pinned, fail when replayed against the fallback unit', async () => {
    const { runId, results } = await runSuites('basics', [resolve('bench-configs/suites/in-car-basics.yaml')]);
    expect(results.map((r) => combinedVerdict(r).outcome)).toEqual(results.map(() => 'pass'));
    const pinned = results.map((r, i) => write(`pinned-${i}.yaml`, pinnedSuiteYaml(pinConversation(r, { run: runId }), `pinned-${i}`)));
    const replay = await runSuites('pinned-fallback', pinned, new FixedReplyUnit(FALLBACK));
    expect(replay.results).toHaveLength(results.length);
    for (const result of replay.results) expect(combinedVerdict(result).outcome, result.spec.key).toBe('fail');
  });
});

describe('a turn no judge had grounds for is undecided in a suite run, and every output says so', () => {
  it('KVRET answered with plausible words and no action: the unrecognised requests are undecided, the conversations need review, never pass', async () => {
    const { runId, results } = await runSuites('kvret-plausible', [resolve('bench-configs/suites/kvret-excerpt.yaml')], new FixedReplyUnit('Sure, here is what I found.'));
    expect(results.filter((r) => combinedVerdict(r).outcome === 'pass')).toEqual([]);
    const undecided = results.filter((r) => combinedVerdict(r).outcome === 'inconclusive');
    // the weather and calendar dialogues: nothing the bench recognises, so nothing it can decide
    expect(undecided.length).toBeGreaterThanOrEqual(10);
    for (const result of undecided) {
      const verdict = combinedVerdict(result);
      expect(verdict.findings).toEqual([]);
      expect(verdict.undecidedTurns.length).toBeGreaterThan(0);
      for (const turn of verdict.undecidedTurns) expect(result.turns[turn - 1].verdicts[0]).toMatchObject({ outcome: 'inconclusive', reasoning: expect.stringContaining(NO_GROUNDS) });
    }
    const summary = await summarizeRun(store, runId);
    expect(summary.passed).toBe(0);
    expect(summary.inconclusive).toBe(undecided.length);
    const file = join(mkdtempSync(join(tmpdir(), 'icabench-undecided-')), 'junit.xml');
    const junit = new JunitWriter(file);
    results.forEach((r) => junit.add(r));
    junit.write({ id: runId, name: 'kvret-plausible', mode: 'scripted', status: 'completed', createdAt: '' } as Parameters<JunitWriter['write']>[0]);
    const xml = readFileSync(file, 'utf8');
    expect(xml.match(/type="needs_review"/g)).toHaveLength(undecided.length);
    // compare: against a run of the same suite where the unit gave fallbacks, the undecided ones are inconclusive, not fixed
    const fallback = await runSuites('kvret-fallback-compare', [resolve('bench-configs/suites/kvret-excerpt.yaml')], new FixedReplyUnit(FALLBACK));
    const comparison = compareRuns(await summarizeRun(store, fallback.runId), summary);
    expect(comparison.a).toMatchObject({ passed: 0, failed: 20, inconclusive: 0 });
    expect(comparison.b).toMatchObject({ passed: 0, inconclusive: undecided.length });
  });
});

describe('`icabench suite import` says up front how many turns the oracle will have no grounds for', () => {
  it('the KVRET excerpt and a transcript with a recognised request, a thank-you and an unrecognised question', async () => {
    const kvret = await runCli(['suite', 'import', 'kvret', 'data/kvret/kvret_dev_excerpt.json', '--out', join(dir, 'cli-kvret.yaml')]);
    expect(kvret.code, kvret.stderr).toBe(0);
    expect(kvret.stdout).toMatch(/^imported 20 KVRET dialogues as .*; (\d+) of 51 turns ask for something the bench does not recognise.*Add a model judge, `means:` or `expect:`/);
    const csv = write('cli.csv', ['conversation,user', 'a,Set the temperature to 21 degrees', 'a,Thanks!', 'a,Is it going to snow tomorrow?'].join('\n'));
    const lab = await runCli(['suite', 'import', 'transcripts', csv, '--out', join(dir, 'cli-lab.yaml')]);
    expect(lab.code, lab.stderr).toBe(0);
    expect(lab.stdout).toContain('; 1 of 3 turns ask for something the bench does not recognise');
  }, 60_000);
});

describe('no fallback false alarms on the fault-free reference unit', () => {
  it('quickstart without faults: 0 fallback_response labels', async () => {
    const text = readFileSync('bench-configs/quickstart.yaml', 'utf8')
      .replace('seeds: seeds/in-car.yaml', `seeds: ${resolve('bench-configs/seeds/in-car.yaml')}`)
      .replace(/  faults:\n(    .*\n)+/, '  faults: { profiles: [] }\n');
    expect(text).toContain('faults: { profiles: [] }');
    const { loadCampaignConfig } = await import('../../src/kinds/dialogue/config.ts');
    const campaign = loadCampaignConfig(write('quickstart.yaml', text));
    const { runId } = await runCampaign(campaign, { store, tiers: await buildTiers(campaign.config) });
    const results = [...store.conversations(runId)];
    expect(results).toHaveLength(60);
    expect(fallbackLabels(results)).toEqual([]);
  }, 120_000);

  it('the shipped suites: 0 on the hand-written basics; on KVRET only the reference unit\'s own "didn\'t understand" replies to requests are labelled', async () => {
    const basics = await runSuites('basics-clean', [resolve('bench-configs/suites/in-car-basics.yaml')]);
    expect(fallbackLabels(basics.results)).toEqual([]);
    const kvret = await runSuites('kvret-clean', [resolve('bench-configs/suites/kvret-excerpt.yaml')]);
    const labelled = fallbackLabels(kvret.results);
    // the reference unit does not serve weather or calendars and misses some navigation wording: those are real fallbacks
    for (const turn of labelled) {
      expect(turn.reply?.text).toBe(REFERENCE_REPLIES.notUnderstood);
      expect(asksSomething(turn.utterance.text)).toBe(true);
    }
    // every reply that is not its fallback wording, and every social turn, goes unlabelled
    const notLabelled = kvret.results.flatMap((r) => r.turns).filter((t) => !labelled.includes(t));
    expect(notLabelled.filter((t) => t.reply?.text === REFERENCE_REPLIES.notUnderstood && asksSomething(t.utterance.text))).toEqual([]);
    expect(labelled.length).toBeGreaterThan(0);
  });
});
