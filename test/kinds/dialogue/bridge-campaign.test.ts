import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { io } from 'socket.io-client';
import { connectHeadUnit } from '../../../src/bridge/client.ts';
import { BRIDGE_FACTS } from '../../../src/bridge/facts.ts';
import type { LoadedCampaign } from '../../../src/kinds/dialogue/config.ts';
import type { CampaignEvent } from '../../../src/run/events.ts';
import { buildTiers } from '../../../src/kinds/dialogue/tiers.ts';
import { writeRunOutputs } from '../../../src/report/write.ts';
import type { ContextVector } from '../../../src/domain/context.ts';
import type { ConversationResult } from '../../../src/domain/conversation.ts';
import { connectConfiguredHeadUnit } from '../../../src/run/headunit.ts';
import type { ConnectedHeadUnit } from '../../../src/run/connect.ts';
import { ReferenceHeadUnit } from '../../../src/headunit/reference/reference-headunit.ts';
import type { HeadUnitHandler } from '../../../src/headunit/types.ts';
import { EVENTS } from '../../../src/protocol/bridge.ts';
import { ResultStore } from '../../../src/store/store.ts';
import { campaignFromYaml, tempStore as tempStoreIn } from './helpers.ts';
import { deepJsonArray, rawUnit, sendRawEvent, validHello } from '../../bridge/helpers.ts';
import { runCampaign } from '../../helpers/run-kinds.ts';

const SEEDS = resolve('bench-configs/seeds/in-car.yaml');
const CLI = resolve('bin/icabench.js');
const TOKEN_ENV = 'ICABENCH_TEST_BRIDGE_TOKEN';
const TOKEN = 'campaign-bridge-token';
process.env[TOKEN_ENV] = TOKEN;
const UNIT = new ReferenceHeadUnit().unit.name;

const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  while (cleanups.length) await cleanups.pop()!();
});

const campaign = campaignFromYaml;
const tempStore = () => tempStoreIn((close) => cleanups.push(close));

/** The config's bridge, with a head unit dialled in by `dialIn` once the bench listens (as a lab unit would). */
async function bridgeRig(loaded: LoadedCampaign, dialIn: (url: string) => Promise<void> | void): Promise<ConnectedHeadUnit> {
  let dialled: Promise<void> | undefined;
  const rig = await connectConfiguredHeadUnit(loaded.config.headUnit, (line) => {
    const url = /bridge listening on (\S+);/.exec(line)?.[1];
    if (url) dialled = Promise.resolve(dialIn(url));
  });
  await dialled;
  cleanups.push(() => rig.close());
  return rig;
}

/**
 * The reference head unit dialled in over the bridge in this process (what `icabench headunit` runs);
 * `holdReply` may return a promise the unit waits for before answering that turn.
 */
async function referenceUnit(url: string, reconnect = false, holdReply?: (sessionId: string, turn: number) => Promise<void> | undefined): Promise<void> {
  const reference = new ReferenceHeadUnit();
  const handler: HeadUnitHandler = {
    unit: reference.unit,
    capabilities: reference.capabilities,
    startSession: (id, context) => reference.startSession(id, context),
    endSession: (id) => reference.endSession(id),
    async handleTurn(sessionId, turn, text, context) {
      await holdReply?.(sessionId, turn);
      return reference.handleTurn(sessionId, turn, text, context);
    },
  };
  const client = await connectHeadUnit({ url, token: TOKEN, handler, reconnect });
  cleanups.push(() => client.close());
}

/** A result without what legitimately differs between two runs of the same plan: timing. */
function comparable(result: ConversationResult): unknown {
  const { startedAt: _startedAt, durationMs: _durationMs, ...rest } = result;
  return { ...rest, turns: result.turns.map(({ latencyMs: _latency, ...turn }) => turn) };
}

/** Each conversation of a run, comparable across runs (session ids carry the run id). */
function byKey(store: ResultStore, runId: string): Map<string, unknown> {
  return new Map([...store.conversations(runId)].map((c) => [c.spec.key, JSON.parse(JSON.stringify(comparable(c)).replaceAll(runId, 'RUN'))]));
}

/** A hand-written unit's session handling: the reference unit opens and closes each session the bench starts. */
function openSessionsOn(socket: { on(event: string, listener: (...args: any[]) => void): unknown; emit(event: string, ...args: unknown[]): unknown }, reference: ReferenceHeadUnit): void {
  socket.on(EVENTS.sessionStart, ({ sessionId, context }: { sessionId: string; context: ContextVector }) => {
    reference.startSession(sessionId, context);
    socket.emit(EVENTS.sessionReady, { sessionId });
  });
  socket.on(EVENTS.sessionEnd, ({ sessionId }: { sessionId: string }) => reference.endSession(sessionId));
}

function bridgeConfig(extra = ''): string {
  return `headUnit: { type: bridge, port: 0, tokenEnv: ${TOKEN_ENV}, waitSeconds: 60${extra} }\n`;
}

function exitOf(child: ChildProcess): Promise<number | null> {
  if (child.exitCode !== null) return Promise.resolve(child.exitCode);
  return new Promise((done) => child.once('exit', (code) => done(code)));
}

/** Replaces the unit under its own name, then leaves at once: the hijack attempt of issue #17. */
async function hijack(url: string): Promise<void> {
  const intruder = await rawUnit(url, validHello(UNIT, TOKEN));
  await intruder.acked;
  intruder.socket.disconnect();
}

describe('a bridge campaign under hostile traffic', () => {
  it('deeply nested messages (pre-auth hello, and reply/ready/error with the token) up to 1,000,000 deep leave the results identical', async () => {
    const yaml = `name: deep\nconversations: 24\nconcurrency: 4\nheadUnit: { type: bridge, port: 0, tokenEnv: ${TOKEN_ENV}, waitSeconds: 60, maxMessageBytes: 600000, turnTimeoutMs: 120000 }\n`;
    const store = tempStore();
    const clean = campaign(yaml);
    const cleanRun = await runCampaign(clean, { store, tiers: await buildTiers(clean.config), headUnit: await bridgeRig(clean, (url) => referenceUnit(url)) });

    // the unit holds one reply until the whole attack has been sent, so every deep message lands while the campaign runs
    let attackSent!: () => void;
    const attackDone = new Promise<void>((done) => (attackSent = done));
    const attacked = campaign(yaml);
    let url = '';
    const rig = await bridgeRig(attacked, (u) => {
      url = u;
      return referenceUnit(u, false, (sessionId, turn) => (sessionId.includes('/c00010-') && turn === 0 ? attackDone : undefined));
    });
    const sendAttack = async (): Promise<number> => {
      const rogue = await rawUnit(url, validHello('rogue-with-token', TOKEN));
      cleanups.push(() => void rogue.socket.disconnect());
      await rogue.acked;
      let refusedHellos = 0;
      for (const depth of [1_000, 5_000, 100_000, 1_000_000]) {
        const stranger = await rawUnit(url, null);
        cleanups.push(() => void stranger.socket.disconnect());
        const hungUp = new Promise<void>((done) => stranger.socket.once('disconnect', () => done()));
        sendRawEvent(stranger.socket, EVENTS.hello, `{"protocol":${deepJsonArray(depth)}}`);
        const deep = deepJsonArray(depth);
        sendRawEvent(rogue.socket, EVENTS.assistantReply, `{"sessionId":"x","turn":0,"text":"t","state":{"s":${deep}}}`);
        sendRawEvent(rogue.socket, EVENTS.sessionReady, `{"sessionId":"x","more":${deep}}`);
        sendRawEvent(rogue.socket, EVENTS.error, `{"sessionId":"x","code":"internal","message":${deep}}`);
        await hungUp;
        refusedHellos += stranger.errors.filter((e) => e.code === 'invalid_message').length;
      }
      // every deep message of the rogue was answered, so the bench has read them all
      await vi.waitFor(() => expect(rogue.errors).toHaveLength(12), { timeout: 60_000, interval: 50 });
      return refusedHellos;
    };
    let attack: Promise<number> | null = null;
    const attackedRun = await runCampaign(attacked, {
      store,
      tiers: await buildTiers(attacked.config),
      headUnit: rig,
      onEvent: (e) => {
        if (e.type === 'run_started') attack = sendAttack().finally(attackSent);
      },
    });
    expect(await attack).toBe(4);
    expect(attackedRun).toMatchObject({ status: 'completed', done: 24, stopReason: null });
    const expected = byKey(store, cleanRun.runId);
    expect(expected.size).toBe(24);
    expect(byKey(store, attackedRun.runId)).toEqual(expected);
  }, 300_000);

  it('1,500 conversations at concurrency 32 against an instant unit: 0 rate_limited, twice with identical results', async () => {
    const yaml = `name: fair-rate\nconversations: 1500\nconcurrency: 32\n${bridgeConfig()}`;
    const store = tempStore();
    const runs: string[] = [];
    for (let i = 0; i < 2; i++) {
      const loaded = campaign(yaml);
      // the default flood guard of a bridge config (500 unsolicited messages per second) stays on
      expect(loaded.config.headUnit).toMatchObject({ type: 'bridge', maxMessagesPerSecond: 500 });
      const result = await runCampaign(loaded, { store, tiers: await buildTiers(loaded.config), headUnit: await bridgeRig(loaded, (url) => referenceUnit(url)) });
      expect(result).toMatchObject({ status: 'completed', done: 1500 });
      const stored = [...store.conversations(result.runId)];
      expect(stored.filter((c) => c.error?.includes('rate_limited'))).toEqual([]);
      expect(stored.filter((c) => c.status === 'sut_error')).toEqual([]);
      runs.push(result.runId);
    }
    const first = byKey(store, runs[0]);
    expect(first.size).toBe(1500);
    expect(byKey(store, runs[1])).toEqual(first);
  }, 600_000);
});

describe('a unit replaced mid-campaign', () => {
  it('pauses new conversations, `icabench headunit` redials, and the campaign completes with every conversation stored once', async () => {
    const loaded = campaign(`name: replaced\nconversations: 40\nconcurrency: 4\n${bridgeConfig(', reconnectGraceSeconds: 60')}`);
    const store = tempStore();
    let unitLog = '';
    let url = '';
    const rig = await bridgeRig(loaded, async (u) => {
      url = u;
      const child = spawn(process.execPath, [CLI, 'headunit', '--url', u, '--token', TOKEN], { stdio: ['ignore', 'ignore', 'pipe'] });
      child.stderr!.on('data', (d) => (unitLog += d));
      cleanups.push(async () => {
        child.kill('SIGINT');
        await exitOf(child);
      });
    });
    const originalAddress = rig.bridge!.connectedUnits()[0].address;
    const notices: string[] = [];
    const benchLog: string[] = [];
    let finished = 0;
    let hijacked: Promise<void> | null = null;
    const result = await runCampaign(loaded, {
      store,
      tiers: await buildTiers(loaded.config),
      headUnit: rig,
      log: (line) => benchLog.push(line),
      onEvent: (e: CampaignEvent) => {
        if (e.type === 'headunit') notices.push(e.kind);
        if (e.type === 'conversation_finished' && ++finished === 10) hijacked = hijack(url);
      },
    });
    await hijacked;
    expect(result).toMatchObject({ status: 'completed', done: 40, planned: 40, stopReason: null });
    const stored = [...store.conversations(result.runId)];
    expect(new Set(stored.map((c) => c.spec.key)).size).toBe(40);
    // only conversations whose session was on a connection that went away failed, and they say so
    for (const c of stored.filter((x) => x.status !== 'completed')) {
      expect(c.protocol?.linkLost, c.error ?? '').not.toBeNull();
      expect(c.error).toMatch(/disconnected/);
    }
    expect(stored.filter((c) => c.protocol?.linkLost === 'replaced').every((c) => c.error!.includes('replaced by a new connection from 127.0.0.1:'))).toBe(true);

    const replaced = store.runFacts(result.runId, BRIDGE_FACTS.replaced).map((f) => f.data as { previousAddress: string; address: string });
    expect(replaced[0].previousAddress).toBe(originalAddress);
    expect(replaced[0].address).not.toBe(originalAddress);
    expect(store.runFacts(result.runId, BRIDGE_FACTS.paused).length).toBeGreaterThanOrEqual(1);
    expect(store.runFacts(result.runId, BRIDGE_FACTS.resumed).length).toBe(store.runFacts(result.runId, BRIDGE_FACTS.paused).length);
    expect(store.runFacts(result.runId, BRIDGE_FACTS.stopped)).toEqual([]);
    expect(notices).toEqual(expect.arrayContaining(['replaced', 'paused', 'connected', 'resumed']));
    expect(benchLog.some((l) => l.includes(`was replaced by a new connection from ${replaced[0].address}`) && l.includes(originalAddress))).toBe(true);
    expect(unitLog).toMatch(/bench: replaced: another connection of head unit "icabench-reference" dialled in from 127\.0\.0\.1:\d+/);
    expect(unitLog).toMatch(/redialling in \d+ ms/);

    const { summary } = await writeRunOutputs(store, result.runId, mkdtempSync(join(tmpdir(), 'icabench-replaced-out-')), { unit: 'the built-in reference head unit', faults: null });
    expect(summary.protocol).toMatchObject({ replacements: 1, stopped: null });
    expect(summary.protocol!.reconnects).toBeGreaterThanOrEqual(1);
  }, 300_000);

  it('without a redial, the campaign stops after the grace period with the reason, not with a flood of unavailable conversations', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'icabench-grace-'));
    const config = join(dir, 'grace.yaml');
    writeFileSync(config, `name: grace\nseeds: ${SEEDS}\nconversations: 400\nconcurrency: 4\nheadUnit: { type: bridge, port: 0, tokenEnv: ${TOKEN_ENV}, waitSeconds: 60, reconnectGraceSeconds: 2 }\n`);
    const env = { ...process.env, [TOKEN_ENV]: TOKEN };
    let benchOut = '';
    const bench = spawn(process.execPath, [CLI, 'run', config, '--workspace', join(dir, 'ws'), '--out', join(dir, 'out'), '--no-progress'], { env });
    cleanups.push(() => void bench.kill('SIGKILL'));
    bench.stderr.on('data', (d) => (benchOut += d));
    bench.stdout.on('data', (d) => (benchOut += d));
    let url: string | undefined;
    for (let i = 0; i < 1200 && !(url = /bridge listening on (\S+);/.exec(benchOut)?.[1]); i++) await new Promise((r) => setTimeout(r, 50));
    // a unit that cannot redial: dialled in from this process without reconnect, then replaced by an intruder that leaves
    await referenceUnit(url!);
    for (let i = 0; i < 1200 && !/conversations \(/.test(benchOut); i++) await new Promise((r) => setTimeout(r, 50));
    await hijack(url!);
    const code = await exitOf(bench);
    expect(code, benchOut).toBe(3);
    expect(benchOut).toMatch(/bridge: no head unit "icabench-reference" connected: new conversations wait for it to dial in again/);
    expect(benchOut).toMatch(/stopped: head unit "icabench-reference" left and did not come back: unavailable: no head unit named "icabench-reference" dialled in within 2000 ms/);
    const summary = JSON.parse(readFileSync(join(dir, 'out', 'summary.json'), 'utf8'));
    expect(summary.run.status).toBe('interrupted');
    expect(summary.protocol.stopped).toMatch(/did not come back/);
    expect(summary.conversations).toBeLessThan(400);
    // only conversations that were running (4 workers) when the unit went, or were opening a session meanwhile — not a flood of unavailable ones
    expect(summary.errors.sut_error).toBeGreaterThanOrEqual(1);
    expect(summary.errors.sut_error).toBeLessThanOrEqual(8);
    expect(summary.protocol.linkLost.replaced).toBeGreaterThanOrEqual(1);
  }, 300_000);
});

/** Runs the campaign on `rig` and writes its outputs; the parsed summary.json with them. */
async function runAndReport(loaded: LoadedCampaign, store: ResultStore, rig: ConnectedHeadUnit) {
  const result = await runCampaign(loaded, { store, tiers: await buildTiers(loaded.config), headUnit: rig });
  const out = mkdtempSync(join(tmpdir(), 'icabench-protocol-out-'));
  (await writeRunOutputs(store, result.runId, out, { unit: 'the built-in reference head unit', faults: null })).summary;
  return { result, out, summary: JSON.parse(readFileSync(join(out, 'summary.json'), 'utf8')) };
}

describe('protocol anomalies on record', () => {
  it('gives exact duplicate, late and wrong-turn counts in summary.json and the report, and a timeout names the stray reply', async () => {
    const loaded = campaign(`name: anomalies\nconversations: 6\nconcurrency: 1\nmaxTurns: [8]\n${bridgeConfig(', turnTimeoutMs: 800')}`);
    const store = tempStore();
    const reference = new ReferenceHeadUnit();
    const rig = await bridgeRig(loaded, async (url) => {
      const raw = await rawUnit(url, validHello(reference.unit.name, TOKEN));
      cleanups.push(() => void raw.socket.disconnect());
      const socket = raw.socket;
      openSessionsOn(socket, reference);
      socket.on(EVENTS.userTurn, async ({ sessionId, turn, text, context }: { sessionId: string; turn: number; text: string; context: ContextVector }) => {
        const body = await reference.handleTurn(sessionId, turn, text, context);
        const reply = (t: number) => socket.emit(EVENTS.assistantReply, { ...body, sessionId, turn: t });
        const key = sessionId.split('/')[1];
        if (key.startsWith('c00000-') && turn === 1) [0, 1].forEach(() => reply(1)); // one duplicate
        else if (key.startsWith('c00000-') && turn === 2) [0, 1, 2].forEach(() => reply(2)); // two duplicates
        else if (key.startsWith('c00001-') && turn <= 1) [40 + turn, turn].forEach(reply); // two replies for turns never asked
        else if (key.startsWith('c00002-') && turn === 1) setTimeout(() => reply(1), 1_200); // late: 400 ms after the 800 ms deadline
        else if (key.startsWith('c00003-') && turn === 0) reply(1); // the wrong turn, and turn 0 goes unanswered
        else reply(turn);
      });
      await raw.acked;
    });
    const { result, out, summary } = await runAndReport(loaded, store, rig);
    expect(result.done).toBe(6);
    expect(summary.protocol).toMatchObject({
      conversations: 6,
      affectedConversations: 4,
      duplicateReplies: 3,
      lateReplies: 1,
      wrongTurnReplies: 3,
      invalidMessages: 0,
      unattributed: 0,
      droppedOverRate: 0,
      linkLost: { disconnected: 0, replaced: 0 },
      stopped: null,
    });
    expect(summary.protocol.late).toHaveLength(1);
    expect(summary.protocol.late[0]).toMatchObject({ turn: 1 });
    expect(summary.protocol.late[0].key).toMatch(/^c00002-/);
    expect(summary.protocol.late[0].lateMs).toBeGreaterThanOrEqual(200);
    expect(summary.protocol.late[0].lateMs).toBeLessThan(5_000);
    const rows = Object.fromEntries(summary.protocol.byConversation.map((r: { key: string }) => [r.key.slice(0, 6), r]));
    expect(rows.c00000).toMatchObject({ duplicateReplies: 3, wrongTurnReplies: 0, lateReplies: [] });
    expect(rows.c00001).toMatchObject({ duplicateReplies: 0, wrongTurnReplies: 2 });
    expect(rows.c00003).toMatchObject({ wrongTurnReplies: 1 });

    const stored = [...store.conversations(result.runId)];
    const c3 = stored.find((c) => c.spec.key.startsWith('c00003-'))!;
    expect(c3.status).toBe('sut_error');
    expect(c3.error).toMatch(/did not answer turn 0 of ".*" within 800 ms; meanwhile it sent a reply for turn 1 \(a turn the bench never asked\)$/);
    expect(stored.find((c) => c.spec.key.startsWith('c00002-'))!.error).toMatch(/did not answer turn 1 .* within 800 ms$/);

    const report = readFileSync(join(out, 'report.html'), 'utf8');
    expect(report).toContain('<h2>Head unit protocol</h2>');
    const count = (label: string) => new RegExp(`<tr><td>${label}</td><td class="n">(\\d+)</td></tr>`).exec(report)?.[1];
    expect([count('duplicate replies'), count('late replies'), count('wrong-turn replies'), count('invalid messages')]).toEqual(['3', '1', '3', '0']);
    expect(report).toMatch(/data-col="protocol">3 duplicate</);
    expect(report).toMatch(/data-col="protocol">2 wrong turn</);
    expect(report).toMatch(/data-col="protocol">1 late \(\+\d+ ms after the timeout\)</);
  }, 120_000);

  it('across reconnects: a reply flushed before hello and one sent after it are late (link lost) by turn, the message before hello is kept with its content', async () => {
    const loaded = campaign(`name: reconnects\nconversations: 4\nconcurrency: 1\nmaxTurns: [8]\n${bridgeConfig(', reconnectGraceSeconds: 30')}`);
    const store = tempStore();
    const reference = new ReferenceHeadUnit();
    const rig = await bridgeRig(loaded, async (url) => {
      // a unit written the usual socket.io way: hello from its connect handler, automatic reconnection with a send buffer
      const socket = io(url, { transports: ['websocket'], reconnection: true, reconnectionDelay: 50, reconnectionDelayMax: 100, forceNew: true });
      cleanups.push(() => void socket.disconnect());
      socket.on('connect', () => socket.emit(EVENTS.hello, validHello(reference.unit.name, TOKEN)));
      openSessionsOn(socket, reference);
      socket.on(EVENTS.userTurn, async ({ sessionId, turn, text, context }: { sessionId: string; turn: number; text: string; context: ContextVector }) => {
        const body = await reference.handleTurn(sessionId, turn, text, context);
        const reply = () => socket.emit(EVENTS.assistantReply, { ...body, sessionId, turn });
        const key = sessionId.split('/')[1];
        if (turn === 1 && key.startsWith('c00001-')) {
          socket.io.engine.close(); // the transport drops; the reply is buffered and flushed on reconnect, before hello
          reply();
        } else if (turn === 1 && key.startsWith('c00002-')) {
          socket.io.engine.close(); // the transport drops; the unit answers once it is dialled in again
          socket.once(EVENTS.helloAck, reply);
        } else reply();
      });
      await new Promise((resolve) => socket.once(EVENTS.helloAck, resolve));
    });
    const { result, out, summary } = await runAndReport(loaded, store, rig);
    expect(result.done).toBe(4);
    expect(summary.protocol).toMatchObject({
      conversations: 4,
      affectedConversations: 2,
      duplicateReplies: 0,
      lateReplies: 2,
      wrongTurnReplies: 0,
      invalidMessages: 0,
      unattributed: 0,
      beforeHello: 1,
      linkLost: { disconnected: 2, replaced: 0 },
      reconnects: 2,
    });
    const late = Object.fromEntries(summary.protocol.late.map((l: { key: string }) => [l.key.slice(0, 6), l]));
    expect(late.c00001).toMatchObject({ turn: 1, cause: 'link_lost' });
    expect(late.c00002).toMatchObject({ turn: 1, cause: 'link_lost' });
    expect(summary.protocol.beforeHelloMessages).toHaveLength(1);
    const [early] = summary.protocol.beforeHelloMessages;
    expect(early).toMatchObject({ event: EVENTS.assistantReply, turn: 1 });
    expect(early.key).toMatch(/^c00001-/);
    expect(JSON.parse(early.content)).toMatchObject({ sessionId: `${result.runId}/${early.key}`, turn: 1 });
    const rows = Object.fromEntries(summary.protocol.byConversation.map((r: { key: string }) => [r.key.slice(0, 6), r]));
    expect(rows.c00001).toMatchObject({ beforeHello: 1, duplicateReplies: 0, linkLost: 'disconnected' });
    expect(rows.c00002).toMatchObject({ beforeHello: 0, duplicateReplies: 0, linkLost: 'disconnected' });
    const report = readFileSync(join(out, 'report.html'), 'utf8');
    expect(report).toMatch(/<tr><td>messages before hello<\/td><td class="n">1<\/td><\/tr>/);
    expect(report).toMatch(/data-col="protocol">1 late \(\+\d+ ms after the link was lost\) · link disconnected · 1 before hello</);
  }, 120_000);
});
