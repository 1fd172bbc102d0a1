import { createServer, type Server } from 'node:http';
import { mkdtempSync, readdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { loadManualQaConfig } from '../../../src/kinds/manual-qa/config.ts';
import { manualQaKind } from '../../../src/kinds/manual-qa/kind.ts';
import { runKindCampaign } from '../../../src/run/runner.ts';
import { ResultStore } from '../../../src/store/store.ts';
import { dataPath } from '../../helpers/repoData.ts';

const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  while (cleanups.length) await cleanups.pop()!();
});

/**
 * An OpenAI-compatible chat endpoint standing in for the head unit: it answers the first `answerFirst` questions, then
 * is down (503) until `fixed` is set. `asked` records each question it answered.
 */
async function flakyUnit(answerFirst: number): Promise<{ url: string; asked: string[]; fix(): void; server: Server }> {
  const asked: string[] = [];
  let fixed = false;
  const server = createServer((request, response) => {
    let body = '';
    request.on('data', (chunk: Buffer) => (body += chunk.toString('utf8')));
    request.on('end', () => {
      if (!fixed && asked.length >= answerFirst) {
        response.writeHead(503, { 'content-type': 'application/json' }).end(JSON.stringify({ error: { message: 'assistant backend down' } }));
        return;
      }
      asked.push(JSON.parse(body).messages.at(-1).content);
      response.writeHead(200, { 'content-type': 'application/json' });
      response.end(JSON.stringify({ id: 'x', object: 'chat.completion', choices: [{ index: 0, finish_reason: 'stop', message: { role: 'assistant', content: 'Open the settings menu.' } }] }));
    });
  });
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  const { port } = server.address() as { port: number };
  return { url: `http://127.0.0.1:${port}/v1`, asked, fix: () => (fixed = true), server };
}

describe('--resume of a manual-QA run whose head unit was down', () => {
  // down from the start (the run ends unit_unreachable), or after two answers (the run completes with four errors)
  it.each([
    { down: 'from the start', answerFirst: 0, firstStatus: 'unit_unreachable' },
    { down: 'after two answers', answerFirst: 2, firstStatus: 'completed' },
  ])('unit down $down: --resume reruns exactly the questions that never reached it, keeps the answered ones, and ends completed', { timeout: 120_000 }, async ({ answerFirst, firstStatus }) => {
    const dir = mkdtempSync(join(tmpdir(), 'manual-unreached-'));
    const chapters = readdirSync(dataPath('bmw-manual/xml')).filter((f) => f.endsWith('.xml')).sort().slice(0, 2).map((f) => dataPath(`bmw-manual/xml/${f}`));
    const unit = await flakyUnit(answerFirst);
    cleanups.push(() => new Promise<void>((done) => unit.server.close(() => done())));
    const config = join(dir, 'manual.yaml');
    writeFileSync(config, `kind: manual-qa\nname: manual-down\nmanual: ${JSON.stringify(chapters)}\nlimit: 6\nconcurrency: 1\nheadUnit: { type: http, baseUrl: "${unit.url}", model: assistant }\n`);
    const loaded = loadManualQaConfig(config);
    const store = ResultStore.open(join(dir, 'icabench.db'));
    cleanups.push(() => store.close());

    const first = await runKindCampaign(manualQaKind, loaded, { store });
    expect(first).toMatchObject({ status: firstStatus, done: 6, planned: 6 });
    const before = store.itemResults(first.runId, { done: true });
    const answered = before.filter((row) => row.outcome !== 'error');
    const unreached = before.filter((row) => row.outcome === 'error').map((row) => row.key);
    expect(answered).toHaveLength(answerFirst);
    expect(unreached).toHaveLength(6 - answerFirst);

    unit.fix();
    const lines: string[] = [];
    const second = await runKindCampaign(manualQaKind, loaded, { store, resumeRunId: first.runId, log: (line) => lines.push(line) });
    expect(second).toMatchObject({ runId: first.runId, status: 'completed', stopReason: null, done: 6 });
    const shown = unreached.length > 5 ? `${unreached.slice(0, 5).join(', ')}, … ${unreached.length - 5} more` : unreached.join(', ');
    expect(lines).toContain(`--resume: ${unreached.length} questions that never reached the head unit run again (${shown})`);
    const after = store.itemResults(first.runId, { done: true });
    // the questions asked again are exactly the unreached ones; the answered ones are kept as they were stored
    const questionOf = new Map(before.map((row) => [row.key, (row.item as { question: string }).question]));
    expect(unit.asked.slice(answerFirst).sort()).toEqual(unreached.map((key) => questionOf.get(key)!).sort());
    expect(after.filter((row) => answered.some((a) => a.key === row.key))).toEqual(answered);
    expect(after.every((row) => row.outcome !== 'error')).toBe(true);
    expect(store.getRun(first.runId)).toMatchObject({ status: 'completed', stored: 6 });
  });
});
