import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { renderToStaticMarkup } from 'react-dom/server';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { main } from '../../../src/cli/main.ts';
import { startFleetWorker, type FleetWorker } from '../../../src/fleet/worker.ts';
import { campaignKindNames, readCampaignKind } from '../../../src/kinds/registry.ts';
import type { CampaignEvent } from '../../../src/run/events.ts';
import type { ListedRun } from '../../../src/server/server.ts';
import { ResultStore } from '../../../src/store/store.ts';
import { workspaceStorePath } from '../../../src/store/workspace.ts';
import { itemHref, runHref } from '../../../src/ui/routes.ts';
import { GenericRunView } from '../../../src/ui/views/RunPage.tsx';
import { RunsTable } from '../../../src/ui/views/RunsView.tsx';
import { startRedis, type TestRedis } from '../../fleet/redis-server.ts';
import { waitForWorkers } from '../../fleet/helpers.ts';
import { startHarness, type Harness } from '../../server/helpers.ts';
import { FIFTH_KIND, FIFTH_PAPER } from './kind.ts';
import './register.ts';

/**
 * "A fifth kind is one folder": the kind of ./kind.ts and its registry entry (./register.ts), and no other file, run from
 * the CLI, the bench app (started, followed, reported, compared) and a fleet worker. Its run page, summary and method
 * line are its own: never the dialogue agreement page, never the dialogue paper.
 */
const WORDS = ['alpha', 'beta', 'gamma', 'delta', 'epsilon', 'zeta'];
const PAPER_STATEMENT = `paper preset: ${FIFTH_PAPER}, run as published (docs/reproduction.md)`;

let dir: string;
let config: string;
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'fifth-kind-'));
  config = join(dir, 'fifth.yaml');
  writeFileSync(config, [`kind: ${FIFTH_KIND}`, 'name: fifth-words', 'method: paper', `words: [${WORDS.join(', ')}]`, 'concurrency: 2', ''].join('\n'));
});

/** `icabench run` in this process (the registration is this process's); its summary.json. */
async function cliRun(args: string[], out: string): Promise<Record<string, unknown>> {
  process.exitCode = undefined;
  await main(['node', 'icabench', 'run', config, '--out', out, '--no-progress', ...args]);
  expect(process.exitCode ?? 0).toBe(0);
  return JSON.parse(readFileSync(join(out, 'summary.json'), 'utf8'));
}

/** What differs between two runs of one config: ids, clocks, what each invocation recorded. */
function comparable({ run, invocations: _i, tiers: _t, ...rest }: Record<string, unknown>): unknown {
  const { id: _id, createdAt: _c, finishedAt: _f, ...info } = run as Record<string, unknown>;
  return { ...rest, run: info };
}

describe('a fifth kind from a fixture folder and its registry entry', () => {
  let cliSummary: Record<string, unknown>;

  it('is a kind of the registry: a config of it is read as such', () => {
    expect(campaignKindNames()).toContain(FIFTH_KIND);
    expect(readCampaignKind(config)).toBe(FIFTH_KIND);
  });

  it('runs from the CLI: its own stored kind, summary.json with its method line, and report', async () => {
    const workspace = join(dir, 'cli-ws');
    cliSummary = await cliRun(['--workspace', workspace], join(dir, 'cli-out'));
    expect(cliSummary).toMatchObject({ kind: FIFTH_KIND, words: 6, passed: 2, letters: 30, preset: { method: 'paper', statement: PAPER_STATEMENT } });
    expect(readFileSync(join(dir, 'cli-out', 'report.html'), 'utf8')).toContain(FIFTH_PAPER);
    const store = ResultStore.open(workspaceStorePath(workspace));
    try {
      expect(store.listRuns().map((r) => [r.kind, r.status, r.stored])).toEqual([[FIFTH_KIND, 'completed', 6]]);
    } finally {
      store.close();
    }
  });

  describe('in the bench app', () => {
    let h: Harness;
    const events: CampaignEvent[] = [];
    const runIds: string[] = [];
    beforeAll(async () => {
      h = await startHarness({ configsDir: dir });
      h.server.control.subscribe((event) => (event.type === 'control' ? undefined : events.push(event)));
      for (let i = 0; i < 2; i++) {
        const started = await h.api('/api/campaign/start', { body: { configName: 'fifth.yaml' } });
        expect(started.status, JSON.stringify(started.json)).toBe(202);
        await h.server.control.settled();
        runIds.push(started.json.runId);
      }
    }, 60_000);
    afterAll(() => h?.close());

    it('lists the config as valid, starts it and is followed live: the kind, its page, its nouns and every item', async () => {
      const configs = await h.api('/api/configs');
      expect(configs.json.configs).toContainEqual(expect.objectContaining({ name: 'fifth.yaml', kind: FIFTH_KIND, valid: true }));
      const live = await h.api('/api/campaign');
      expect(live.json).toMatchObject({ state: 'finished', runId: runIds[1], kind: FIFTH_KIND, page: 'fifth-words', nouns: { item: 'word', items: 'words' }, planned: 6, done: 6 });
      expect(live.json.recent.map((r: { key: string }) => r.key).sort()).toEqual([...WORDS].sort());
      const finished = events.filter((e) => e.type === 'item_finished' && e.runId === runIds[0]);
      expect(finished.map((e) => (e as { word: string }).word)).toContain('7 letters');
      expect(events.find((e) => e.type === 'run_started')).toMatchObject({ kind: FIFTH_KIND, page: 'fifth-words' });
    });

    it('reports it: the run listed with its own page, links and method line; summary.json as the CLI writes it; its own routes', async () => {
      const runs = (await h.api('/api/runs')).json as { runs: ListedRun[]; comparedKindGroups: string[][] };
      expect(runs.comparedKindGroups).toContainEqual([FIFTH_KIND]);
      const listed = runs.runs.find((r) => r.id === runIds[0])!;
      expect(listed.view).toEqual({ page: 'fifth-words', links: [{ label: 'letters', path: 'letters' }], compared: true, paper: FIFTH_PAPER });
      const served = await h.api(`/api/runs/${runIds[0]}/summary.json`);
      expect(served.status).toBe(200);
      expect(comparable(served.json)).toEqual(comparable(cliSummary));
      const letters = await h.api(`/api/runs/${runIds[0]}/letters`);
      expect(letters.json.words).toContainEqual({ word: 'epsilon', letters: 7, outcome: 'fail' });
      expect((await h.api(`/api/runs/${runIds[0]}/letters/beta`)).json).toEqual({ word: 'beta', letters: 4, outcome: 'pass' });
      expect((await h.api(`/api/runs/${runIds[0]}/letters/omega`)).status).toBe(404);
      // never the dialogue pages: a run of another kind has no conversations and no agreement
      for (const path of ['agreement', 'conversations', 'summary']) {
        const refused = await h.api(`/api/runs/${runIds[0]}/${path}`);
        expect(refused.status, path).toBe(404);
        expect(refused.json.error.message).toBe(`run ${runIds[0]} is a ${FIFTH_KIND} run: it has no /${path}`);
      }
    });

    it('shows it on its own pages: the runs list links its page and its links, the run page its method line, never the agreement page', () => {
      const run = { ...h.store.getRun(runIds[0])!, view: { page: 'fifth-words', links: [{ label: 'letters', path: 'letters' }], compared: true, paper: FIFTH_PAPER }, resumeRefusal: null, outcomes: {} };
      const table = renderToStaticMarkup(<RunsTable runs={[run]} />);
      expect(table).toContain(`<a href="#/runs/${run.id}/letters">letters</a>`);
      expect(table).not.toContain('agreement');
      expect(runHref(run.id, run.view.page)).toBe(`#/runs/${run.id}`);
      expect(itemHref(run.id, run.view.page, 'beta')).toBe(`#/runs/${run.id}`);
      const page = renderToStaticMarkup(<GenericRunView run={run} />);
      expect(page).toContain(`method: ${FIFTH_PAPER}`);
      expect(page).not.toContain('Negi');
    });

    it('compares two of its runs by its own comparison, and refuses a pair with a run of another kind', async () => {
      const compare = await h.api(`/api/compare?a=${runIds[0]}&b=${runIds[1]}`);
      expect(compare.status, JSON.stringify(compare.json)).toBe(200);
      expect(compare.json).toEqual({ kind: FIFTH_KIND, page: 'fifth-words', letters: { a: 30, b: 30 }, warnings: [] });
      const talk = h.store.createRun({ name: 'talk', mode: 'guided', config: { name: 'talk' }, plan: [] });
      const mixed = await h.api(`/api/compare?a=${runIds[0]}&b=${talk}`);
      expect(mixed.status).toBe(400);
      expect(mixed.json.error.message).toBe(`compare: a dialogue run compares with a dialogue, suite, live run, not with a ${FIFTH_KIND} run`);
    });
  });

  describe('on a fleet', () => {
    let redis: TestRedis;
    let worker: FleetWorker;
    beforeAll(async () => {
      redis = await startRedis();
      // an in-process worker: the kind is registered in this process, as a lab's worker registers its kinds
      worker = await startFleetWorker({ redisUrl: redis.url, rig: 'rig-a', capabilities: ['text'], transports: ['reference'], concurrency: 2, lockMs: 2000, heartbeatMs: 200, log: () => undefined });
      await waitForWorkers(redis.url, 1);
    }, 60_000);
    afterAll(async () => {
      await worker?.close();
      await redis?.stop();
    });

    it('runs its items as jobs on the worker and stores the same summary as a run in one process', async () => {
      const summary = await cliRun(['--workspace', join(dir, 'fleet-ws'), '--fleet', redis.url], join(dir, 'fleet-out'));
      expect(comparable(summary)).toEqual(comparable(cliSummary));
    }, 60_000);
  });
});
