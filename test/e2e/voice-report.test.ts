import { spawnSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { CLI } from '../helpers/cli.ts';
import { REPO_ROOT } from '../helpers/repoData.ts';
import { describeInBrowser, screenshot, startBenchApp, type BenchApp } from './app.ts';

/**
 * #24 item 6: the app shows what the CLI report shows. A real spoken run (the voice quickstart cut to one
 * conversation of two turns, clean and at 5 dB: espeak-ng and pocketsphinx from scripts/setup-system.sh)
 * and its report in the app: the voice section with WER per SNR level and latency, the same figures as
 * the run's summary.json, and what the unit recognised on each spoken turn.
 */
describeInBrowser('the app report of a voice run', () => {
  let app: BenchApp;
  let runId: string;
  let summary: { voice: { turns: number; bySnr: Record<string, { turns: number }> } };

  beforeAll(async () => {
    app = await startBenchApp('icabench-e2e-voice-', (workspace) => {
      const config = readFileSync(join(REPO_ROOT, 'bench-configs/voice-quickstart.yaml'), 'utf8')
        .replace(/^conversations: \d+/m, 'conversations: 1')
        .replace(/^maxTurns: .*/m, 'maxTurns: [2]')
        .replace(/snrDb: \[[^\]]*\]/, 'snrDb: [clean, 5]')
        .replace(/saveAudio: true/, 'saveAudio: false')
        .replace(/^seeds: .*/m, `seeds: ${join(REPO_ROOT, 'bench-configs/seeds/in-car.yaml')}`);
      writeFileSync(join(workspace, 'voice.yaml'), config);
      const out = join(workspace, 'out');
      const run = spawnSync(process.execPath, [CLI, 'run', join(workspace, 'voice.yaml'), '--workspace', workspace, '--out', out, '--no-progress'], { cwd: REPO_ROOT, encoding: 'utf8' });
      expect(run.status, run.stderr).toBe(0);
      runId = /run (\S+) completed/.exec(run.stdout)![1];
      summary = JSON.parse(readFileSync(join(out, 'summary.json'), 'utf8'));
    });
  });
  afterAll(async () => app?.close());

  it('has the voice section: WER per SNR level, latency, and the recognised text on the turns', async () => {
    const { page, errors } = await app.newPage();
    await page.goto(app.url);
    await page.goto(`${app.origin}/#/runs/${encodeURIComponent(runId)}`);
    const section = page.getByTestId('voice-section');
    await section.waitFor({ timeout: 60_000 });
    const rows = await page.getByTestId('voice-by-snr').locator('tbody tr').allInnerTexts();
    expect(rows.map((row) => row.split('\t')[0])).toEqual(['clean', '5 dB']);
    expect(rows.map((row) => Number(row.split('\t')[1]))).toEqual([summary.voice.bySnr.clean.turns, summary.voice.bySnr['5'].turns]);
    expect(await page.getByTestId('voice-latency').innerText()).toMatch(/\d+ ms \/ \d+ ms/);
    await screenshot(page, 'voice-report');
    // a spoken turn of a conversation says what the unit heard
    await page.getByTestId('conversation-table').locator('tbody tr').first().click();
    await expect.poll(() => page.getByTestId('turn-voice').count(), { timeout: 30_000 }).toBeGreaterThan(0);
    expect(await page.getByTestId('turn-voice').first().innerText()).toMatch(/^heard: /);
    expect(errors).toEqual([]);
  });

  it('no page overflows sideways at 1440 px (the browser window of these tests)', async () => {
    const { page } = await app.newPage();
    await page.goto(app.url);
    const wide: string[] = [];
    for (const route of ['#/', '#/setup', '#/live', '#/runs', `#/runs/${encodeURIComponent(runId)}`, '#/compare', '#/session', '#/conformance']) {
      await page.goto(`${app.origin}/${route}`);
      await page.waitForLoadState('networkidle');
      const { scroll, client } = await page.evaluate(() => ({ scroll: document.documentElement.scrollWidth, client: document.documentElement.clientWidth }));
      if (scroll > client) wide.push(`${route}: ${scroll} px wide in ${client} px`);
    }
    expect(wide).toEqual([]);
  });
});
