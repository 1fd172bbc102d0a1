import { createServer as createHttpServer } from 'node:http';
import { createServer } from 'node:net';
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { renderToStaticMarkup } from 'react-dom/server';
import { afterEach, describe, expect, it } from 'vitest';
import { conversationReach, forgetUnreachedConversations, REACH_WINDOW, reachedUnit, trackUnitReach } from '../../../src/run/unit-reach.ts';
import { runEndStatus } from '../../../src/run/resume.ts';
import { loadCampaignConfig } from '../../../src/kinds/dialogue/config.ts';
import { ResultStore } from '../../../src/store/store.ts';
import type { ListedRun } from '../../../src/server/server.ts';
import { RunsTable } from '../../../src/ui/views/RunsView.tsx';
import { runCli } from '../../helpers/cli.ts';
import { startHarness } from '../../server/helpers.ts';

const SEEDS = resolve('bench-configs/seeds/in-car.yaml');
const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  while (cleanups.length) await cleanups.pop()!();
});

/** A loopback port with nothing listening on it (taken, then released). */
async function deadPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  const { port } = server.address() as { port: number };
  await new Promise<void>((done) => server.close(() => done()));
  return port;
}

const deadHttpUnit = (port: number) => `headUnit: { type: http, baseUrl: "http://127.0.0.1:${port}/v1", model: unit }\n`;

const unreached = { status: 'sut_error' as const, turns: [], error: 'unavailable: http://127.0.0.1:1/v1/chat/completions is unreachable' };
const answered = { status: 'completed' as const, turns: [], error: null };

describe('a run whose head unit is never reached', () => {
  it('icabench run with an http unit nothing listens on: exit 4, status unit_unreachable, one line with the count and the cause, stopped after the window', { timeout: 120_000 }, async () => {
    const dir = mkdtempSync(join(tmpdir(), 'icabench-unreached-'));
    const config = join(dir, 'dead.yaml');
    writeFileSync(config, `name: dead\nseeds: ${SEEDS}\nconversations: 60\nconcurrency: 2\n${deadHttpUnit(await deadPort())}`);
    const workspace = join(dir, 'ws');
    const run = await runCli(['run', config, '--workspace', workspace, '--out', join(dir, 'out'), '--no-progress']);
    expect(run.code, run.stderr).toBe(4);
    const lines = run.stderr.split('\n').filter((l) => l.includes('unit_unreachable: none of'));
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(/^run (\S+) unit_unreachable: none of the (\d+) conversation\(s\) that ran reached the head unit \(last cause: unavailable: http:\/\/127\.0\.0\.1:\d+\/v1\/chat\/completions is unreachable[^)]*\)\. Start or fix the head unit .*--resume \1$/);
    expect(run.stdout).toMatch(/^run \S+ unit_unreachable: \d+ conversations/m);
    const summary = JSON.parse(readFileSync(join(dir, 'out', 'summary.json'), 'utf8'));
    expect(summary.run.status).toBe('unit_unreachable');
    const store = ResultStore.open(join(workspace, 'icabench.db'));
    try {
      const [stored] = store.listRuns();
      expect(stored.status).toBe('unit_unreachable');
      // maxErrorShare (default 1 over the last 20): the run stopped once 20 had failed, not after all 60
      expect(stored.stored).toBeGreaterThanOrEqual(REACH_WINDOW);
      expect(stored.stored).toBeLessThan(60);
      expect(Number(lines[0].match(/none of the (\d+)/)![1])).toBe(stored.stored);
    } finally {
      store.close();
    }
  });

  it('--resume with the unit fixed runs the conversations that never reached it again, instead of keeping them as sut_error', { timeout: 180_000 }, async () => {
    const dir = mkdtempSync(join(tmpdir(), 'icabench-unreached-resume-'));
    const port = await deadPort();
    const config = join(dir, 'dead.yaml');
    writeFileSync(config, `name: dead-then-fixed\nseeds: ${SEEDS}\nconversations: 24\nconcurrency: 2\nmaxTurns: [2]\n${deadHttpUnit(port)}`);
    const workspace = join(dir, 'ws');
    const first = await runCli(['run', config, '--workspace', workspace, '--no-progress']);
    expect(first.code, first.stderr).toBe(4);
    const runId = first.stderr.match(/^run (\S+) unit_unreachable/m)![1];
    // the unit is fixed: an OpenAI-compatible endpoint now answers on the same address
    const unit = createHttpServer((request, response) => {
      request.resume();
      request.on('end', () => {
        response.writeHead(200, { 'content-type': 'application/json' });
        response.end(JSON.stringify({ id: 'x', object: 'chat.completion', choices: [{ index: 0, finish_reason: 'stop', message: { role: 'assistant', content: 'Sure, I can help with that.' } }] }));
      });
    });
    await new Promise<void>((done) => unit.listen(port, '127.0.0.1', done));
    try {
      const resumed = await runCli(['run', config, '--resume', runId, '--workspace', workspace, '--no-progress']);
      expect(resumed.code, resumed.stderr).toBe(0);
      expect(resumed.stderr).toMatch(/--resume: \d+ conversations that never reached the head unit run again/);
      const store = ResultStore.open(join(workspace, 'icabench.db'));
      try {
        const run = store.listRuns().find((r) => r.id === runId)!;
        expect(run.status).toBe('completed');
        expect(run.stored).toBe(24);
        const keys = [...store.remainingSpecs(runId)];
        expect(keys).toEqual([]);
        // nothing the outage left is counted against the unit any more
        expect(forgetUnreachedConversations(store, runId)).toEqual([]);
      } finally {
        store.close();
      }
    } finally {
      await new Promise<void>((done) => unit.close(() => done()));
    }
  });

  it('a bridge unit that never dials in: exit 4 naming the cause, and no run left behind', { timeout: 120_000 }, async () => {
    const dir = mkdtempSync(join(tmpdir(), 'icabench-unreached-'));
    const config = join(dir, 'nobody.yaml');
    writeFileSync(config, `name: nobody\nseeds: ${SEEDS}\nconversations: 4\nheadUnit: { type: bridge, port: 0, tokenEnv: ICABENCH_TEST_NOBODY_TOKEN, waitSeconds: 1 }\n`);
    const run = await runCli(['run', config, '--workspace', join(dir, 'ws')], { ICABENCH_TEST_NOBODY_TOKEN: 'nobody-token' });
    expect(run.code, run.stderr).toBe(4);
    expect(run.stderr).toMatch(/^icabench: the head unit was not reached, no run was recorded: unavailable: no head unit .*dialled in within 1000 ms/m);
    expect(existsSync(join(dir, 'ws', 'icabench.db'))).toBe(false);
  });

  it('the bench app runs such a campaign and marks it in the runs list', { timeout: 120_000 }, async () => {
    const h = await startHarness();
    cleanups.push(() => h.close());
    const text = `name: dead-app\nseeds: ${SEEDS}\nconversations: 30\nconcurrency: 2\n${deadHttpUnit(await deadPort())}`;
    const started = await h.api('/api/campaign/start', { body: { configName: 'quickstart.yaml', text } });
    expect(started.status, JSON.stringify(started.json)).toBe(202);
    await h.server.control.settled();
    const runs = (await h.api('/api/runs')).json as { runs: ListedRun[] };
    const run = runs.runs.find((r) => r.id === (started.json as { runId: string }).runId)!;
    expect(run.status).toBe('unit_unreachable');
    const html = renderToStaticMarkup(<RunsTable runs={[run]} />);
    expect(html).toContain('data-status="unit_unreachable"');
    expect(html).toMatch(/<span class="pill pill-fail">head unit unreachable<\/span>/);
  });
});

describe('unit reach (src/run/unit-reach.ts)', () => {
  it('a conversation reached the unit when it has no unit error or got at least one reply', () => {
    expect(reachedUnit(answered)).toBe(true);
    expect(reachedUnit(unreached)).toBe(false);
    expect(reachedUnit({ status: 'sut_error', turns: [{ reply: { text: 'hi' } }, { reply: null }] as never })).toBe(true);
  });

  it('maxErrorShare: stops only after a full window whose unreached share reaches the threshold', () => {
    const all = trackUnitReach();
    for (let i = 0; i < REACH_WINDOW - 1; i++) all.record(conversationReach(unreached));
    expect(all.stopReason()).toBeNull();
    all.record(conversationReach(unreached));
    expect(all.stopReason()).toMatch(/^20 of the last 20 conversations did not reach the head unit \(maxErrorShare 1; last cause: unavailable: /);
    expect(all.neverReached()).toBe(true);

    // one answered conversation in the window keeps the default going; a share of 0.9 does not
    const mixed = trackUnitReach();
    const lenient = trackUnitReach(0.9);
    for (const reach of [mixed, lenient]) {
      reach.record(conversationReach(answered));
      for (let i = 0; i < REACH_WINDOW - 1; i++) reach.record(conversationReach(unreached));
    }
    expect(mixed.stopReason()).toBeNull();
    expect(lenient.stopReason()).toMatch(/^19 of the last 20/);
    expect(mixed.neverReached()).toBe(false);
    // the window slides: the answered one drops out
    mixed.record(conversationReach(unreached));
    expect(mixed.stopReason()).toMatch(/^20 of the last 20/);
  });

  it('the end status: Ctrl+C stays interrupted; otherwise a run that never reached its unit is unit_unreachable, not completed', () => {
    const end = { aborted: false, stopReason: null, budgetHit: false, done: 5, planned: 5 };
    expect(runEndStatus({ ...end, neverReachedUnit: true })).toBe('unit_unreachable');
    expect(runEndStatus({ ...end, stopReason: 'gone', neverReachedUnit: true })).toBe('unit_unreachable');
    expect(runEndStatus({ ...end, aborted: true, neverReachedUnit: true })).toBe('interrupted');
    expect(runEndStatus({ ...end, neverReachedUnit: false })).toBe('completed');
  });

  it('maxErrorShare in a config: a share above 0 and at most 1, named in the error', () => {
    const dir = mkdtempSync(join(tmpdir(), 'icabench-share-'));
    writeFileSync(join(dir, 'c.yaml'), `name: share\nseeds: ${SEEDS}\nconversations: 2\nmaxErrorShare: 1.5\n`);
    expect(() => loadCampaignConfig(join(dir, 'c.yaml'))).toThrow(/maxErrorShare/);
    writeFileSync(join(dir, 'c.yaml'), `name: share\nseeds: ${SEEDS}\nconversations: 2\nmaxErrorShare: 0.5\n`);
    expect(loadCampaignConfig(join(dir, 'c.yaml')).config.maxErrorShare).toBe(0.5);
  });
});
