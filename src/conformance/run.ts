import type { Socket } from 'socket.io';
import { BRIDGE_PROTOCOL, EVENTS, AssistantReplySchema, type BridgeError, type SessionStart, type UserTurn } from '../protocol/bridge.ts';
import { AUDIO_CHUNK_SAMPLES, AUDIO_EVENTS, AUDIO_SAMPLE_RATE, AudioChunkSchema, AudioEndSchema, type AudioChunkInput, type AudioEnd } from '../protocol/audio.ts';
import { TOOL_EVENTS, TOOLS_PROTOCOL, ToolAssistantTextSchema, ToolCallMessageSchema, type ToolResultMessage, type ToolSessionStart } from '../protocol/tools.ts';
import type { ContextVector, VehicleState } from '../domain/context.ts';
import { describeZodError } from '../domain/validation.ts';
import type { BridgeServer, ConnectedUnit } from '../bridge/server.ts';
import { framesForInterval } from '../vehicle/feed.ts';
import { framesToMessage } from '../vehicle/bridge.ts';
import { loadMapping } from '../vehicle/mapping.ts';
import { loadToolCatalog } from '../toolenv/catalog.ts';
import { checkArguments } from '../toolenv/args.ts';
import type { ObserveConfig } from '../vehicle/observe/config.ts';
import { busActionsCheck } from './bus-check.ts';
import { CHECK_IDS, CHECKS, type CheckId, type CheckResult, type ConformanceReport, type Evidence } from './checks.ts';
import { field, forEvidence, Probe, type Received } from './probe.ts';

export interface ConformanceOptions {
  /** the bench's bridge, listening; its turnTimeoutMs is the limit the timing check holds the unit to */
  bridge: BridgeServer;
  turnTimeoutMs: number;
  /** how long to wait for the unit to dial in */
  waitMs: number;
  /** how long a unit may take to dial in again after the bench hung up (default 15 s: the first redial is after 1 s) */
  reconnectWaitMs?: number;
  /** test only this unit (by the name in its hello); default the first that dials in */
  unitName?: string;
  /** the bus to watch for the unit's commands (listen-only); absent: the "actions on the bus" check is skipped */
  observe?: ObserveConfig;
  /** each check as it completes */
  onCheck?: (result: CheckResult) => void;
}

const DEFAULT_RECONNECT_WAIT_MS = 15_000;

/** Where and when the kit's conversations happen; the vehicle state is chosen to differ from every default a unit might fall back on. */
const CONTEXT: ContextVector = { location: { city: 'Munich', district: 'Schwabing', position: { lat: 48.16, lon: 11.58 } }, date: '2026-03-14', time: '18:30' };
export const PROBE_VEHICLE: VehicleState = { speedKmh: 0, gear: 'P', parkingBrake: true, stateOfChargePct: 41, rangeKm: 173, outsideTempC: 9, hvacSetpointC: 21 };
const TEXT_TURNS = ['Find me an Italian restaurant nearby.', 'Set the temperature to 21 degrees.'];
const RANGE_QUESTION = 'What is my remaining range?';
/** The tool session: a vendored CAR-bench task (reference units that replay it read `task`; real units ignore it). */
const TOOL_TASK = { id: 'base_0', type: 'base' } as const;
const TOOL_USER_TEXT = 'Please open the sunroof to about half.';
const MAX_TOOL_STEPS = 40;

type Outcome = Pick<CheckResult, 'status' | 'detail'> & { evidence?: Evidence[] };
const pass = (detail: string, evidence: Evidence[] = []): Outcome => ({ status: 'pass', detail, evidence });
const fail = (detail: string, evidence: Evidence[] = []): Outcome => ({ status: 'fail', detail, evidence });
const skip = (detail: string): Outcome => ({ status: 'skipped', detail });

const received = (m: Received): Evidence => ({ direction: 'received', event: m.event, atMs: m.atMs, payload: forEvidence(m.payload) });
const note = (atMs: number, text: string): Evidence => ({ direction: 'note', event: 'note', atMs, payload: text });

/**
 * Runs the conformance suite against the first unit that dials in to `bridge` (docs/conformance.md): each check
 * passes or fails with what the kit sent, what came back and what the protocol requires. Checks run in the order
 * of CHECK_IDS; reconnect runs last among the core checks' conversations so that a unit that does not come back
 * still gets its audio, vehicle and tools checks first.
 */
export async function runConformance(options: ConformanceOptions): Promise<ConformanceReport> {
  const startedAt = new Date().toISOString();
  const T = options.turnTimeoutMs;
  const results = new Map<CheckId, CheckResult>();
  const record = (id: CheckId, outcome: Outcome, durationMs: number) => {
    const result: CheckResult = { id, title: CHECKS[id].title, requires: CHECKS[id].requires, status: outcome.status, detail: outcome.detail, evidence: outcome.evidence ?? [], durationMs: Math.round(durationMs) };
    results.set(id, result);
    options.onCheck?.(result);
  };
  /** how long the kit waits for an answer: twice the limit, so a slow answer is seen (and fails timing) rather than missed */
  const kit: Kit = { options, T, observeMs: 2 * T, reconnectWaitMs: options.reconnectWaitMs ?? DEFAULT_RECONNECT_WAIT_MS, record };
  const timed = async (id: CheckId, run: () => Promise<Outcome>) => {
    const t0 = performance.now();
    let outcome: Outcome;
    try {
      outcome = await run();
    } catch (error) {
      outcome = fail(`the kit could not complete the check: ${(error as Error).message}`);
    }
    record(id, outcome, performance.now() - t0);
  };

  // 1. hello and token: the first hello (of the named unit) is accepted, or refused with the bench's reason
  const { unit, socket, declaredHello } = await helloCheck(kit);
  const finish = () => report(kit, { startedAt, unit, declaredHello, checks: CHECK_IDS.map((id) => results.get(id)!) });
  if (!unit || !socket) {
    for (const id of CHECK_IDS) if (!results.has(id)) record(id, skip('no unit is connected (see "hello and token")'), 0);
    return finish();
  }
  const capabilities = unit.capabilities;

  // 2. capability declaration, on the hello as sent (before defaults fill missing flags)
  await timed('capabilities', async () => capabilitiesCheck(declaredHello));

  // 3–6. text turns in two sessions open at once: round trip, reply schema, turn ids, timing
  const probe = new Probe(socket);
  await textConversation(kit, probe);

  // 8–10. the capability checks
  await timed('audio', async () => (capabilities.audio ? audioCheck(kit, probe) : skip('the unit does not declare capabilities.audio')));
  await timed('vehicle_context', async () => (capabilities.vehicleContext ? vehicleCheck(kit, probe) : skip('the unit does not declare capabilities.vehicleContext')));
  await timed('tools', async () => (capabilities.tools ? toolsCheck(kit, probe) : skip('the unit does not declare capabilities.tools')));
  await timed('bus_actions', async () =>
    options.observe
      ? busActionsCheck(options.observe, {
          context: CONTEXT,
          now: () => probe.now(),
          openSession: (sessionId, evidence) => openSession(kit, probe, sessionId, evidence),
          ask: (turn, evidence) => ask(kit, probe, turn, evidence),
          endSession: (sessionId, evidence) => void probe.send(EVENTS.sessionEnd, { sessionId, reason: 'completed' }, evidence),
        })
      : skip('no bus to observe was given (--observe TRANSPORT)'),
  );

  // 7. reconnect and resume (last: it hangs the unit up)
  await timed('reconnect', () => reconnectCheck(kit, unit, socket));
  return finish();
}

/** What the checks share: the options, the turn timeout T, how long the kit waits for an answer, and how a check's result is recorded. */
interface Kit {
  options: ConformanceOptions;
  T: number;
  observeMs: number;
  reconnectWaitMs: number;
  record(id: CheckId, outcome: Outcome, durationMs: number): void;
}

function report(kit: Kit, run: { startedAt: string; unit: ConnectedUnit | null; declaredHello: unknown; checks: CheckResult[] }): ConformanceReport {
  const { unit, declaredHello, checks } = run;
  return {
    kind: 'icabench-conformance/1',
    protocol: BRIDGE_PROTOCOL,
    startedAt: run.startedAt,
    bridgeUrl: kit.options.bridge.url,
    unit: unit ? { name: unit.name, version: unit.version, address: unit.address } : null,
    declared: declaredHello === undefined ? null : forEvidence(field(declaredHello, 'capabilities') ?? null),
    limits: { turnTimeoutMs: kit.T, reconnectWaitMs: kit.reconnectWaitMs },
    checks,
    passed: checks.every((c) => c.status !== 'fail'),
  };
}

/** The "hello and token" check: the unit that dialled in (with its socket and the hello it sent), or none (refused, or none in time). */
async function helloCheck(kit: Kit): Promise<{ unit: ConnectedUnit | null; socket: Socket | null; declaredHello: unknown }> {
  const { options, record } = kit;
  const hellos: Array<{ hello: unknown; address: string }> = [];
  const onHello = (hello: unknown, address: string) => hellos.push({ hello, address });
  options.bridge.on('hello_received', onHello);
  const dialIn = await waitForDialIn(options.bridge, options.waitMs, options.unitName);
  options.bridge.off('hello_received', onHello);
  const helloOf = (address: string) => hellos.filter((h) => h.address === address).at(-1)?.hello;
  if (dialIn.kind === 'refused') {
    const sent = helloOf(dialIn.address);
    record('hello', fail(`the bench refused the unit's hello: ${dialIn.error.code}: ${dialIn.error.message}`, [
      ...(sent === undefined ? [] : [{ direction: 'received' as const, event: EVENTS.hello, atMs: 0, payload: forEvidence(sent) }]),
      { direction: 'sent', event: EVENTS.error, atMs: 0, payload: dialIn.error },
    ]), 0);
    return { unit: null, socket: null, declaredHello: sent };
  }
  if (dialIn.kind === 'timeout') {
    record('hello', fail(`no head unit${options.unitName ? ` named "${options.unitName}"` : ''} dialled in within ${options.waitMs} ms (start it with bridge URL ${options.bridge.url} and the bench's token)`), options.waitMs);
    return { unit: null, socket: null, declaredHello: undefined };
  }
  const { unit, socket } = dialIn;
  const sent = helloOf(unit.address);
  record('hello', pass(`hello accepted: unit "${unit.name}" ${unit.version} from ${unit.address}`, [
    { direction: 'received', event: EVENTS.hello, atMs: 0, payload: forEvidence(sent) },
    { direction: 'sent', event: EVENTS.helloAck, atMs: 0, payload: { protocol: BRIDGE_PROTOCOL, limits: '(the bench limits)' } },
  ]), 0);
  return { unit, socket, declaredHello: sent };
}

/** The capability declaration, on the hello as sent (before defaults fill missing flags). */
function capabilitiesCheck(declaredHello: unknown): Outcome {
  const raw = field(declaredHello, 'capabilities');
  const evidence: Evidence[] = [{ direction: 'received', event: EVENTS.hello, atMs: 0, payload: forEvidence({ unit: field(declaredHello, 'unit'), capabilities: raw }) }];
  if (typeof raw !== 'object' || raw === null) return fail('hello has no capabilities object: the bench assumes text only', evidence);
  const flags = raw as Record<string, unknown>;
  const missing = ['text', 'audio', 'vehicleContext', 'structuredActions'].filter((f) => typeof flags[f] !== 'boolean');
  if (missing.length) return fail(`hello.capabilities does not declare ${missing.map((f) => `${f}${f in flags ? ` (got ${JSON.stringify(flags[f])})` : ''}`).join(', ')} as a boolean`, evidence);
  if ('tools' in flags && typeof flags.tools !== 'boolean') return fail(`hello.capabilities.tools is ${JSON.stringify(flags.tools)}, not a boolean`, evidence);
  const on = Object.entries(flags).filter(([, v]) => v === true).map(([k]) => k);
  return pass(`declared ${on.join(', ') || 'nothing'}`, evidence);
}

/** session_start → session_ready, within observeMs; returns the latency or null */
async function openSession(kit: Kit, p: Probe, sessionId: string, evidence: Evidence[], context: ContextVector = CONTEXT): Promise<{ ms: number } | { missing: string }> {
  const { observeMs } = kit;
  const from = p.received.length;
  const sentAt = p.send(EVENTS.sessionStart, { sessionId, context } satisfies SessionStart, evidence);
  const { message: ready, problem } = await p.answer(EVENTS.sessionReady, sessionId, (m) => (m.event === EVENTS.sessionReady || m.event === EVENTS.error) && field(m.payload, 'sessionId') === sessionId, from, sentAt, observeMs);
  if (problem) evidence.push(note(problem.atMs, problem.text));
  if (problem) return { missing: `session_start of ${sessionId}: ${problem.text}` };
  if (!ready) return { missing: `no session_ready for ${sessionId} within ${observeMs} ms` };
  evidence.push(received(ready));
  if (ready.event === EVENTS.error) return { missing: `the unit answered session_start of ${sessionId} with bridge_error ${JSON.stringify(forEvidence(ready.payload))}` };
  return { ms: ready.atMs - sentAt };
}

/** user_turn → the first assistant_reply (or bridge_error) for that session after it; a reply the bench refused, or a dropped link, is no reply and says why */
async function ask(kit: Kit, p: Probe, turn: UserTurn, evidence: Evidence[]): Promise<{ reply: Received | null; ms: number; problem?: string }> {
  const { observeMs } = kit;
  const from = p.received.length;
  const sentAt = p.send(EVENTS.userTurn, turn, evidence);
  const { message: reply, problem } = await p.answer(EVENTS.assistantReply, turn.sessionId, (m) => (m.event === EVENTS.assistantReply || m.event === EVENTS.error) && field(m.payload, 'sessionId') === turn.sessionId, from, sentAt, observeMs);
  if (reply) evidence.push(received(reply));
  if (problem) evidence.push(note(problem.atMs, problem.text));
  if (problem) return { reply: null, ms: problem.kind === 'refused' ? problem.atMs - sentAt : Infinity, problem: problem.text };
  return { reply, ms: reply ? reply.atMs - sentAt : Infinity };
}
/** why a request got no assistant_reply: its problem, or silence */
function noReply(kit: Kit, answer: { problem?: string }): string {
  const { observeMs } = kit;
  return answer.problem ?? `no assistant_reply within ${observeMs} ms`;
}

async function textConversation(kit: Kit, p: Probe): Promise<void> {
  const { T, observeMs, record } = kit;
  const t0 = performance.now();
  const evidence: Evidence[] = [];
  const sessions = ['conformance-a', 'conformance-b'];
  const opened = await Promise.all(sessions.map((id) => openSession(kit, p, id, evidence)));
  const readyMs = opened.flatMap((o) => ('ms' in o ? [o.ms] : []));
  const missingReady = opened.flatMap((o) => ('missing' in o ? [o.missing] : []));
  // turn 0 of both sessions in flight at once, then turn 1 of the first
  const asked: UserTurn[] = [
    { sessionId: sessions[0], turn: 0, text: TEXT_TURNS[0], context: CONTEXT },
    { sessionId: sessions[1], turn: 0, text: TEXT_TURNS[1], context: CONTEXT },
  ];
  const answers = missingReady.length ? [] : await Promise.all(asked.map((t) => ask(kit, p, t, evidence)));
  if (!missingReady.length) {
    const third: UserTurn = { sessionId: sessions[0], turn: 1, text: TEXT_TURNS[1], context: CONTEXT };
    asked.push(third);
    answers.push(await ask(kit, p, third, evidence));
  }
  // anything more for these sessions (a duplicate, a reply for another turn) shows up within a short settle
  await p.settle(Math.min(500, T / 4));
  for (const id of sessions) p.send(EVENTS.sessionEnd, { sessionId: id, reason: 'completed' }, evidence);
  const all = p.received.filter((m) => m.event === EVENTS.assistantReply && sessions.includes(field(m.payload, 'sessionId') as string));
  const duration = performance.now() - t0;

  // text turn round trip
  const unanswered = asked.filter((_, i) => !answers[i]?.reply || answers[i].reply!.event !== EVENTS.assistantReply);
  if (missingReady.length) record('text_turn', fail(missingReady.join('; '), evidence), duration);
  else if (unanswered.length) {
    const why = unanswered.map((t) => {
      const got = answers[asked.indexOf(t)]?.reply;
      return `${t.sessionId} turn ${t.turn}: ${got ? `bridge_error ${JSON.stringify(forEvidence(got.payload))}` : noReply(kit, answers[asked.indexOf(t)] ?? {})}`;
    });
    record('text_turn', fail(why.join('; '), evidence), duration);
  } else record('text_turn', pass(`2 sessions opened and ${asked.length} turns answered`, evidence), duration);

  // reply schema
  const invalid = all.flatMap((m) => {
    const parsed = AssistantReplySchema.safeParse(m.payload);
    return parsed.success ? [] : [`${String(field(m.payload, 'sessionId'))} turn ${String(field(m.payload, 'turn'))}: ${describeZodError(parsed.error)}`];
  });
  if (all.length === 0) record('reply_schema', fail('no assistant_reply arrived to check', evidence), duration);
  else if (invalid.length) record('reply_schema', fail(`assistant_reply fails AssistantReplySchema: ${invalid.join('; ')}`, evidence), duration);
  else record('reply_schema', pass(`${all.length} replies pass AssistantReplySchema`, evidence), duration);

  // turn ids: each reply names the turn it answers, once
  const problems: string[] = [];
  for (const [i, t] of asked.entries()) {
    const got = answers[i]?.reply;
    if (got && got.event === EVENTS.assistantReply && field(got.payload, 'turn') !== t.turn) problems.push(`${t.sessionId}: user_turn ${t.turn} was answered with turn ${JSON.stringify(field(got.payload, 'turn'))}`);
  }
  for (const t of asked) {
    const n = all.filter((m) => field(m.payload, 'sessionId') === t.sessionId && field(m.payload, 'turn') === t.turn).length;
    if (n > 1) problems.push(`${t.sessionId} turn ${t.turn} was answered ${n} times`);
  }
  const stray = all.filter((m) => !asked.some((t) => t.sessionId === field(m.payload, 'sessionId') && t.turn === field(m.payload, 'turn')));
  if (stray.length && !problems.length) problems.push(`${stray.length} replies name a turn the kit never asked`);
  if (all.length === 0) record('turn_ids', fail('no assistant_reply arrived to check', evidence), duration);
  else if (problems.length) record('turn_ids', fail(problems.join('; '), evidence), duration);
  else record('turn_ids', pass('every reply names its session and turn, once, with two sessions in flight', evidence), duration);

  // timing
  const latencies = [...readyMs.map((ms) => ({ what: 'session_ready', ms })), ...answers.map((a, i) => ({ what: `${asked[i].sessionId} turn ${asked[i].turn}`, ms: a.ms }))];
  const slow = latencies.filter((l) => l.ms > T);
  const why = (what: string) => answers.find((_, i) => `${asked[i].sessionId} turn ${asked[i].turn}` === what)?.problem;
  const worst = Math.max(...latencies.map((l) => l.ms));
  if (latencies.length === 0) record('timing', fail('nothing came back to time', evidence), duration);
  else if (slow.length)
    record('timing', fail(`over the turn timeout of ${T} ms: ${slow.map((l) => `${l.what} ${Number.isFinite(l.ms) ? `after ${Math.round(l.ms)} ms` : (why(l.what) ?? `not within ${observeMs} ms`)}`).join('; ')}`, evidence), duration);
  else record('timing', pass(`every answer within ${T} ms (slowest ${Math.round(worst)} ms)`, evidence), duration);
}

async function audioCheck(kit: Kit, p: Probe): Promise<Outcome> {
  const { T, observeMs } = kit;
  const evidence: Evidence[] = [];
  const sessionId = 'conformance-audio';
  const opened = await openSession(kit, p, sessionId, evidence);
  if ('missing' in opened) return fail(opened.missing, evidence);
  // one second of driver "speech" (a tone burst: the check is about streaming, not about recognition)
  const pcm = toneBurst(1000);
  let seq = 0;
  for (let offset = 0; offset < pcm.length; offset += AUDIO_CHUNK_SAMPLES, seq++) {
    const samples = pcm.subarray(offset, offset + AUDIO_CHUNK_SAMPLES);
    const chunk: AudioChunkInput = {
      sessionId, turn: 0, direction: 'to_unit', seq, offsetMs: (offset / AUDIO_SAMPLE_RATE) * 1000, sentAt: Date.now(),
      sampleRate: AUDIO_SAMPLE_RATE, encoding: 'pcm_s16le', data: Buffer.from(new Uint8Array(samples.buffer, samples.byteOffset, samples.byteLength)),
    };
    p.send(AUDIO_EVENTS.chunk, chunk, seq < 2 ? evidence : undefined);
  }
  evidence.push(note(p.now(), `… ${seq} driver audio chunks sent in all`));
  p.send(AUDIO_EVENTS.end, { sessionId, turn: 0, direction: 'to_unit', chunks: seq, durationMs: 1000, sentAt: Date.now(), reason: 'completed' } satisfies AudioEnd, evidence);
  const from = p.received.length;
  const spoken = await ask(kit, p, { sessionId, turn: 0, text: '', context: CONTEXT }, evidence);
  const reply = spoken.reply;
  const end = await p.waitFor((m) => m.event === AUDIO_EVENTS.end && field(m.payload, 'sessionId') === sessionId, from, observeMs);
  await p.settle(Math.min(300, T / 4));
  p.send(EVENTS.sessionEnd, { sessionId, reason: 'completed' }, evidence);
  const chunks = p.received.slice(from).filter((m) => m.event === AUDIO_EVENTS.chunk && field(m.payload, 'sessionId') === sessionId);
  chunks.slice(0, 2).forEach((m) => evidence.push(received(m)));
  if (chunks.length > 2) evidence.push(note(chunks.at(-1)!.atMs, `… ${chunks.length} reply audio chunks received in all`));
  if (end) evidence.push(received(end));
  if (!reply || reply.event !== EVENTS.assistantReply) return fail(`the spoken turn: ${noReply(kit, spoken)}`, evidence);
  const problems: string[] = [];
  chunks.forEach((m, i) => {
    const parsed = AudioChunkSchema.safeParse(m.payload);
    if (!parsed.success) problems.push(`chunk ${i}: ${describeZodError(parsed.error)}`);
    else {
      if (parsed.data.direction !== 'to_bench') problems.push(`chunk ${i}: direction ${parsed.data.direction}, expected to_bench`);
      if (parsed.data.turn !== 0) problems.push(`chunk ${i}: turn ${parsed.data.turn}, expected 0`);
      if (parsed.data.seq !== i) problems.push(`chunk ${i}: seq ${parsed.data.seq}, expected ${i}`);
    }
  });
  if (!end) problems.push(`no audio_end (to_bench) within ${observeMs} ms`);
  else {
    const parsed = AudioEndSchema.safeParse(end.payload);
    if (!parsed.success) problems.push(`audio_end: ${describeZodError(parsed.error)}`);
    else if (parsed.data.chunks !== chunks.length) problems.push(`audio_end counts ${parsed.data.chunks} chunks, ${chunks.length} arrived`);
  }
  const text = field(reply.payload, 'text');
  if (chunks.length === 0 && typeof text === 'string' && text.trim()) problems.push('the reply has text but no reply audio');
  if (problems.length) return fail(`reply audio breaks the audio protocol: ${problems.slice(0, 5).join('; ')}${problems.length > 5 ? `; and ${problems.length - 5} more` : ''}`, evidence);
  return pass(`assistant_reply and ${chunks.length} valid reply audio chunks with a matching audio_end`, evidence);
}

async function vehicleCheck(kit: Kit, p: Probe): Promise<Outcome> {
  const evidence: Evidence[] = [];
  const sessionId = 'conformance-vehicle';
  const context: ContextVector = { ...CONTEXT, vehicle: PROBE_VEHICLE };
  const opened = await openSession(kit, p, sessionId, evidence, context);
  if ('missing' in opened) return fail(opened.missing, evidence);
  const mapping = loadMapping('icabench_vehicle');
  const still = { stateAt: () => ({ vehicle: PROBE_VEHICLE, position: CONTEXT.location.position, date: CONTEXT.date, time: CONTEXT.time, second: 0 }) };
  const frames = framesForInterval(still, mapping, 0, 1);
  const from = p.received.length;
  p.send(EVENTS.vehicleContext, { sessionId, payload: framesToMessage('icabench_vehicle', frames) }, evidence);
  const asked = await ask(kit, p, { sessionId, turn: 0, text: RANGE_QUESTION, context }, evidence);
  const reply = asked.reply;
  p.send(EVENTS.sessionEnd, { sessionId, reason: 'completed' }, evidence);
  const complaint = p.received.slice(from).find((m) => m.event === EVENTS.error && field(m.payload, 'sessionId') === sessionId && reply?.index !== m.index);
  if (complaint) evidence.push(received(complaint));
  if (!reply || reply.event !== EVENTS.assistantReply) return fail(`"${RANGE_QUESTION}" after vehicle_context: ${noReply(kit, asked)}`, evidence);
  if (complaint) return fail(`the unit answered vehicle_context with bridge_error ${JSON.stringify(forEvidence(complaint.payload))}`, evidence);
  const expected = String(PROBE_VEHICLE.rangeKm);
  const text = String(field(reply.payload, 'text') ?? '');
  const actions = field(reply.payload, 'actions');
  const inAction = Array.isArray(actions) && actions.some((a) => field(a, 'type') === 'vehicle_info' && String(field(a, 'value')).includes(expected));
  if (!new RegExp(`\\b${expected}\\b`).test(text) && !inAction)
    return fail(`the car's remaining range is ${expected} km (in the CAN frames and in context.vehicle) but the answer does not say so: ${JSON.stringify(text.slice(0, 200))}`, evidence);
  return pass(`the answer uses the vehicle state (${expected} km)`, evidence);
}

async function toolsCheck(kit: Kit, p: Probe): Promise<Outcome> {
  const { observeMs } = kit;
  const evidence: Evidence[] = [];
  const sessionId = 'conformance-tools';
  const tools = loadToolCatalog();
  const offered = new Map(tools.map((t) => [t.name, t]));
  const start: ToolSessionStart = { protocol: TOOLS_PROTOCOL, sessionId, systemPrompt: 'You are the in-car assistant. Use the tools to act on the car.', tools: tools.map((t) => t.openai_schema), task: TOOL_TASK };
  let from = p.received.length;
  p.send(TOOL_EVENTS.sessionStart, start, evidence);
  const ready = await p.waitFor((m) => (m.event === TOOL_EVENTS.sessionReady || m.event === EVENTS.error) && field(m.payload, 'sessionId') === sessionId, from, observeMs);
  if (ready) evidence.push(received(ready));
  if (!ready || ready.event !== TOOL_EVENTS.sessionReady) return fail(ready ? `tool_session_start was answered with bridge_error ${JSON.stringify(forEvidence(ready.payload))}` : `no tool_session_ready within ${observeMs} ms`, evidence);
  from = p.received.length;
  let sentAt = p.send(TOOL_EVENTS.userTurn, { sessionId, turn: 0, text: TOOL_USER_TEXT }, evidence);
  const problems: string[] = [];
  let calls = 0;
  let text: string | null = null;
  for (let step = 0; step <= MAX_TOOL_STEPS && text === null && problems.length === 0; step++) {
    const m = await p.waitFor((r) => [TOOL_EVENTS.toolCall, TOOL_EVENTS.assistantText, EVENTS.error].includes(r.event as never) && field(r.payload, 'sessionId') === sessionId, from, observeMs);
    if (!m) {
      problems.push(`no tool_call or tool_assistant_text ${p.dropped ? `(${p.describeDrop(sentAt)})` : `within ${observeMs} ms`} after ${step === 0 ? 'tool_user_turn' : `tool_result of step ${step - 1}`}`);
      break;
    }
    from = m.index + 1;
    evidence.push(received(m));
    if (m.event === EVENTS.error) {
      problems.push(`the unit sent bridge_error ${JSON.stringify(forEvidence(m.payload))}`);
      break;
    }
    if (m.event === TOOL_EVENTS.assistantText) {
      const parsed = ToolAssistantTextSchema.safeParse(m.payload);
      if (!parsed.success) problems.push(`tool_assistant_text: ${describeZodError(parsed.error)}`);
      else if (parsed.data.turn !== 0) problems.push(`tool_assistant_text names turn ${parsed.data.turn}, the kit asked turn 0`);
      else text = parsed.data.text;
      break;
    }
    const parsed = ToolCallMessageSchema.safeParse(m.payload);
    if (!parsed.success) {
      problems.push(`tool_call: ${describeZodError(parsed.error)}`);
      break;
    }
    if (parsed.data.turn !== 0) problems.push(`tool_call names turn ${parsed.data.turn}, the kit asked turn 0`);
    if (parsed.data.step !== step) problems.push(`tool_call step ${parsed.data.step}, expected ${step}`);
    const results: ToolResultMessage['results'] = [];
    for (const call of parsed.data.calls) {
      calls += 1;
      const tool = offered.get(call.name);
      if (!tool) {
        problems.push(`${call.callId} calls "${call.name}", a tool the kit did not offer`);
        continue;
      }
      let args: unknown = call.arguments;
      if (typeof args === 'string') {
        try {
          args = JSON.parse(args);
        } catch {
          problems.push(`${call.callId} (${call.name}): arguments are not JSON: ${JSON.stringify(String(call.arguments).slice(0, 100))}`);
          continue;
        }
      }
      if (typeof args !== 'object' || args === null || Array.isArray(args)) {
        problems.push(`${call.callId} (${call.name}): arguments are not a JSON object`);
        continue;
      }
      const structural = checkArguments(tool.openai_schema.function.parameters, args).structural;
      if (structural.length) problems.push(`${call.callId} (${call.name}): arguments do not fit the tool's schema: ${structural.join('; ')}`);
      results.push({ callId: call.callId, name: call.name, output: JSON.stringify({ status: 'SUCCESS', result: {} }), status: 'success' });
    }
    if (problems.length) break;
    sentAt = p.send(TOOL_EVENTS.toolResult, { sessionId, turn: 0, step: parsed.data.step, results } satisfies ToolResultMessage, evidence);
  }
  p.send(TOOL_EVENTS.sessionEnd, { sessionId, reason: 'conformance check done' }, evidence);
  if (problems.length) return fail(problems.join('; '), evidence);
  if (text === null) return fail(`no tool_assistant_text after ${MAX_TOOL_STEPS} tool_call messages`, evidence);
  return pass(`${calls} valid tool calls of offered tools, then tool_assistant_text for turn 0`, evidence);
}

async function reconnectCheck(kit: Kit, current: ConnectedUnit, currentSocket: Socket): Promise<Outcome> {
  const { options, reconnectWaitMs } = kit;
  const evidence: Evidence[] = [];
  const t0 = performance.now();
  const back = new Promise<{ unit: ConnectedUnit; socket: Socket } | null>((resolve) => {
    const timer = setTimeout(() => {
      options.bridge.off('unit_connected', onConnected);
      resolve(null);
    }, reconnectWaitMs);
    const onConnected = (info: ConnectedUnit) => {
      if (info.name !== current.name) return;
      clearTimeout(timer);
      options.bridge.off('unit_connected', onConnected);
      options.bridge.waitForHeadUnit(0, info.name).then(
        (connection) => resolve({ unit: info, socket: connection.info()!.socket }),
        () => resolve(null),
      );
    };
    options.bridge.on('unit_connected', onConnected);
  });
  evidence.push(note(0, `the bench hangs up the unit's connection (${current.address})`));
  currentSocket.disconnect(true);
  const again = await back;
  const ms = Math.round(performance.now() - t0);
  if (!again) return fail(`the unit did not dial in again within ${reconnectWaitMs} ms after the bench hung up`, evidence);
  evidence.push(note(ms, `dialled in again from ${again.unit.address} after ${ms} ms`));
  const p = new Probe(again.socket);
  const sessionId = 'conformance-resume';
  const opened = await openSession(kit, p, sessionId, evidence);
  if ('missing' in opened) return fail(`dialled in again after ${ms} ms, but a new session does not open: ${opened.missing}`, evidence);
  const resumed = await ask(kit, p, { sessionId, turn: 0, text: TEXT_TURNS[0], context: CONTEXT }, evidence);
  p.send(EVENTS.sessionEnd, { sessionId, reason: 'completed' }, evidence);
  if (!resumed.reply || resumed.reply.event !== EVENTS.assistantReply) return fail(`dialled in again after ${ms} ms, but a turn of a new session: ${noReply(kit, resumed)}`, evidence);
  return pass(`dialled in again after ${ms} ms; a new session works`, evidence);
}

type DialIn = { kind: 'connected'; unit: ConnectedUnit; socket: Socket } | { kind: 'refused'; error: BridgeError; address: string } | { kind: 'timeout' };

/** The first unit (of that name) to be accepted, or the first refusal, or nothing within waitMs. */
function waitForDialIn(bridge: BridgeServer, waitMs: number, name: string | undefined): Promise<DialIn> {
  return new Promise((resolve) => {
    const done = (result: DialIn) => {
      clearTimeout(timer);
      bridge.off('unit_refused', onRefused);
      resolve(result);
    };
    const onRefused = (error: BridgeError, address: string) => done({ kind: 'refused', error, address });
    bridge.on('unit_refused', onRefused);
    const timer = setTimeout(() => done({ kind: 'timeout' }), waitMs);
    bridge.waitForHeadUnit(waitMs, name).then(
      (connection) => {
        const info = connection.info();
        if (info) done({ kind: 'connected', unit: { name: info.name, version: info.version, capabilities: info.capabilities, connectedAt: info.connectedAt, address: info.address }, socket: info.socket });
      },
      () => done({ kind: 'timeout' }),
    );
  });
}

/** A 440 Hz tone at a speaking level, `ms` long, as 16-bit samples. */
function toneBurst(ms: number): Int16Array {
  const samples = new Int16Array((AUDIO_SAMPLE_RATE * ms) / 1000);
  for (let i = 0; i < samples.length; i++) samples[i] = Math.round(8000 * Math.sin((2 * Math.PI * 440 * i) / AUDIO_SAMPLE_RATE));
  return samples;
}

