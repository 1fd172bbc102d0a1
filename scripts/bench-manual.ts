/**
 * Benchmark of the owner's-manual path: ingest the 41 vendored BMW chapters (3 runs, best and
 * median), generate the deterministic test set, then run it as a deterministic manual-QA pass —
 * every question sent as a user turn over a loopback bridge to the reference head unit's manual
 * skill and evaluated by the deterministic tier. Prints ingestion time, questions/s and peak RSS.
 * Usage: npm run bench:manual -- [questions=all]
 */
import { randomBytes } from 'node:crypto';
import { readdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { loadavg } from 'node:os';
import { connectHeadUnit } from '../src/bridge/client.ts';
import { startBridgeServer } from '../src/bridge/server.ts';
import { ManualQaSkill } from '../src/headunit/reference/manual-skill.ts';
import { ReferenceHeadUnit } from '../src/headunit/reference/reference-headunit.ts';
import { ManualCorpus } from '../src/manual/corpus.ts';
import { DeterministicManualEvaluator } from '../src/manual/evaluate.ts';
import { buildManualIndex } from '../src/manual/manual-index.ts';
import { Bm25Retriever } from '../src/manual/retrieval.ts';
import { generateDeterministicTestSet } from '../src/manual/testset.ts';

const dir = resolve(import.meta.dirname, '../data/bmw-manual/xml');
const files = readdirSync(dir).filter((f) => f.endsWith('.xml')).sort().map((f) => join(dir, f));
const limit = process.argv[2] ? Number(process.argv[2]) : Infinity;

const ingestMs: number[] = [];
let index;
for (let run = 0; run < 3; run++) {
  const t0 = performance.now();
  index = await buildManualIndex(files);
  ingestMs.push(performance.now() - t0);
}
ingestMs.sort((a, b) => a - b);
const corpus = new ManualCorpus(index!);
const t1 = performance.now();
const items = generateDeterministicTestSet(corpus).slice(0, limit);
const generateMs = performance.now() - t1;

const token = randomBytes(8).toString('hex');
const bridge = await startBridgeServer({ host: '127.0.0.1', port: 0, token, maxMessagesPerSecond: 1_000_000 });
const unit = new ReferenceHeadUnit({ manual: { skill: new ManualQaSkill(corpus, new Bm25Retriever(corpus.chunks)) } });
const client = await connectHeadUnit({ url: bridge.url, token, handler: unit });
const connection = await bridge.waitForHeadUnit(10_000, unit.unit.name);
const evaluator = new DeterministicManualEvaluator(corpus);
const context = { location: { city: 'Munich', district: 'Schwabing', position: { lat: 48.16, lon: 11.58 } }, date: '2026-05-12', time: '12:00' } as never;
const t2 = performance.now();
let answerMs = 0;
let judged = 0;
for (const [n, item] of items.entries()) {
  const session = await connection.openSession(`bench/q${n}`, context);
  const a = performance.now();
  const reply = await session.send(0, item.question, context);
  answerMs += performance.now() - a;
  await session.close();
  if (evaluator.evaluate(item, reply.text).outcome === 'judged') judged++;
}
const campaignS = (performance.now() - t2) / 1000;
await client.close();
await bridge.close();

const rssMb = process.resourceUsage().maxRSS / 1024;
console.log(`ingestion of ${files.length} chapters (${corpus.chunks.length} chunks): best ${ingestMs[0].toFixed(0)} ms, median ${ingestMs[1].toFixed(0)} ms`);
console.log(`deterministic test set: ${items.length} questions in ${generateMs.toFixed(0)} ms`);
console.log(`deterministic manual-QA pass over the bridge: ${items.length} questions in ${campaignS.toFixed(1)} s = ${(items.length / campaignS).toFixed(1)} questions/s (head-unit answer ${(answerMs / items.length).toFixed(1)} ms/question, ${judged} judged)`);
console.log(`peak RSS ${rssMb.toFixed(0)} MB; load average ${loadavg().map((l) => l.toFixed(2)).join(' ')}`);
