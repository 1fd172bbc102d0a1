import { join, resolve } from 'node:path';
import { createInterface } from 'node:readline';
import type { Command } from 'commander';
import { turnLabels } from '../../analysis/verdict.ts';
import { LiveSessionConfigSchema, loadLiveSessionConfig, type LiveSessionConfig } from '../../kinds/live/config.ts';
import { LiveSession } from '../../kinds/live/session.ts';
import { runKindCampaign } from '../../run/runner.ts';
import { turnNumber, type TurnRecord } from '../../domain/conversation.ts';
import { FAULT_PROFILE_NAMES } from '../../headunit/reference/faults.ts';
import { openWorkspaceStore } from '../../store/workspace.ts';
import { onStopSignal, QUIT_EXIT_CODE } from '../signals.ts';

const HELP = `Type what the driver says; a line starting with ":" changes the car or the session:
  :speed 30   :gear D   :soc 40   :temp 5   :time 14:05   :date 2026-05-12   :district Schwabing   :position 48.15,11.57
  :state   :end (or Ctrl+D)`;

/** A typed number as a number; anything else stays the text typed, for the range check to name it (":speed fast"). */
function typedNumber(value: string): number | string {
  return /^[-+]?(\d+\.?\d*|\.\d+)(e[-+]?\d+)?$/i.test(value) ? Number(value) : value;
}

/** One state command (":gear D") as a suite context change, range-checked by the session; null for a line that is not one. */
function stateChange(command: string, value: string): unknown {
  switch (command) {
    case 'speed':
      return { vehicle: { speedKmh: typedNumber(value) } };
    case 'gear':
      return { vehicle: { gear: value.toUpperCase() } };
    case 'soc':
      return { vehicle: { stateOfChargePct: typedNumber(value) } };
    case 'temp':
      return { vehicle: { outsideTempC: typedNumber(value) } };
    case 'time':
      return { time: value };
    case 'date':
      return { date: value };
    case 'district':
      return { district: value };
    case 'position': {
      const [lat, lon] = value.split(/[\s,]+/);
      return { position: { lat: typedNumber(lat ?? ''), lon: typedNumber(lon ?? '') } };
    }
    default:
      return null;
  }
}

/** A turn as it ends, numbered as the report and the app number it (turnNumber). */
function printTurn(turn: TurnRecord): void {
  const vehicle = turn.context.vehicle;
  console.log(`turn ${turnNumber(turn.index)}`);
  console.log(`  unit: ${turn.reply?.text ?? '(no reply)'}${turn.reply?.actions.length ? `  [${turn.reply.actions.map((a) => a.type).join(', ')}]` : ''}`);
  const labels = turnLabels(turn);
  console.log(`  judge: ${labels.length === 0 ? 'no failure' : labels.map((l) => `${l.label}: ${l.evidence}`).join('; ')}  (${vehicle ? `gear ${vehicle.gear}, ${vehicle.speedKmh} km/h, ` : ''}${turn.context.time})`);
  const targets = turn.targetsAfter.map((t) => `${t.id} ${t.request.intent} ${t.status === 1 ? `completed${t.completedTurn === null ? '' : ` at turn ${turnNumber(t.completedTurn)}`}` : t.status === -1 ? 'dropped' : 'open'}`);
  if (targets.length) console.log(`  targets: ${targets.join(', ')}`);
}

/** Reads the technician's lines until :end, Ctrl+D, Ctrl+C (`stopped`) or the session's end: turns to the unit, ":" lines to the car. */
async function typeTurns(session: LiveSession, stopped: AbortSignal): Promise<void> {
  // read only now: lines typed (or piped) meanwhile wait in stdin, none is lost before the loop listens
  const lines = createInterface({ input: process.stdin, terminal: false });
  stopped.addEventListener('abort', () => lines.close(), { once: true });
  try {
    for await (const raw of lines) {
      const line = raw.trim();
      if (!line) continue;
      if (line.startsWith(':')) {
        const [command, ...rest] = line.slice(1).split(/\s+/);
        if (command === 'end') break;
        stateCommand(session, command, rest.join(' '));
        continue;
      }
      try {
        printTurn(await session.say(line));
      } catch (error) {
        console.log(`  ${(error as Error).message}`);
        if (session.stored()) break;
      }
      if (stopped.aborted) break;
    }
  } finally {
    lines.close();
  }
}

/** One ":" line: shows the car's state, or changes it (range-checked by the session). */
function stateCommand(session: LiveSession, command: string, value: string): void {
  if (command === 'state') {
    const c = session.context();
    console.log(`  ${c.location.district}, ${c.time}, gear ${c.vehicle?.gear}, ${c.vehicle?.speedKmh} km/h${c.vehicle?.stateOfChargePct !== undefined ? `, ${c.vehicle.stateOfChargePct} %` : ''}`);
    return;
  }
  const change = stateChange(command, value);
  if (change === null) {
    console.log(`  unknown command ":${command}"\n${HELP}`);
    return;
  }
  try {
    const c = session.setContext(change);
    console.log(`  now: ${c.location.district}, ${c.time}, gear ${c.vehicle?.gear}, ${c.vehicle?.speedKmh} km/h`);
  } catch (error) {
    console.log(`  ${(error as Error).message}`);
  }
}

interface SessionOptions {
  config?: string;
  faults?: string;
  district?: string;
  name: string;
  workspace: string;
  out?: string;
}

/** The session's config: the file's (if any) with the command line's name, faults and district over it, through the one session schema. */
function sessionConfig(options: SessionOptions): { config: LiveSessionConfig; path?: string } {
  const fromFile = options.config ? loadLiveSessionConfig(options.config) : null;
  const base = fromFile?.config ?? LiveSessionConfigSchema.parse({});
  const faults = options.faults?.split(',').map((f) => f.trim()).filter(Boolean);
  const config = LiveSessionConfigSchema.parse({
    ...base,
    ...(options.name !== 'live session' || !options.config ? { name: options.name } : {}),
    ...(faults ? { headUnit: { type: 'reference', faults: { profiles: faults, rate: 1 } } } : {}),
    ...(options.district ? { context: { ...base.context, district: options.district } } : {}),
  });
  return { config, path: fromFile?.path };
}

export function registerSessionCommands(program: Command): void {
  program
    .command('session')
    .description('a live session in the terminal: type turns to the unit, set the car\'s state between them, see each reply judged; stored as a run (docs/suites.md)')
    .option('--config <file>', 'a session config (YAML: name, headUnit, judges, safety, scoring, llm, context, vehicle)')
    .option('--faults <profiles>', `the reference unit's fault profiles, comma-separated, each firing on every turn it applies to (${FAULT_PROFILE_NAMES.join(', ')})`)
    .option('--district <name>', 'where the session starts (a district of the reference world)')
    .option('--name <name>', 'the run name', 'live session')
    .option('--workspace <dir>', 'workspace holding the results store (icabench.db)', 'workspace')
    .option('--out <dir>', 'where to write the report (default: runs/<run id>)')
    .action(async (options: SessionOptions) => {
      const { config, path } = sessionConfig(options);
      const session = new LiveSession(config, path);
      const opened = openWorkspaceStore(options.workspace);
      // Ctrl+C ends the session as :end does, but the run ends interrupted; a second Ctrl+C quits at once
      const stop = new AbortController();
      const stopListening = onStopSignal(() => {
        console.error('\nstopping: the turns so far are judged and stored (Ctrl+C again quits at once)');
        stop.abort();
      });
      try {
        const run = runKindCampaign(session.kind, session.loaded, { store: opened.store, signal: stop.signal, onEvent: (e) => session.onEvent(e), log: (line) => console.error(line) });
        // the rig comes up first (a unit on the bridge is waited for); a failure there ends the command
        await Promise.race([session.started, run]);
        const context = session.context();
        console.log(`run ${session.runId}: ${context.location.city}, ${context.location.district}, ${context.date} ${context.time}, gear ${context.vehicle?.gear ?? '?'} at ${context.vehicle?.speedKmh ?? 0} km/h`);
        console.log(HELP);
        await typeTurns(session, stop.signal);
        session.end();
        const result = await run;
        const out = resolve(options.out ?? join('runs', result.runId));
        const [{ writeRunOutputs }, { unitUnderTest }] = await Promise.all([import('../../report/write.ts'), import('../../kinds/dialogue/unit-under-test.ts')]);
        const { summary } = await writeRunOutputs(opened.store, result.runId, out, unitUnderTest(opened.store.getRun(result.runId)?.config));
        console.log(`run ${result.runId} ${result.status}: ${session.history().length} turns, ${summary.failed ? 'failed' : summary.passed ? 'passed' : 'not decided'}; report: ${join(out, 'report.html')}`);
        console.log(`pin it as a regression: icabench pin ${result.runId} session --workspace ${options.workspace}`);
        if (result.status === 'interrupted') process.exitCode = QUIT_EXIT_CODE;
      } finally {
        stopListening();
        opened.closeAndDiscardIfEmpty();
      }
    });
}
