import { join, resolve } from 'node:path';
import { createInterface } from 'node:readline';
import type { Command } from 'commander';
import { turnLabels } from '../../analysis/verdict.ts';
import { LiveSession, LiveSessionConfigSchema } from '../../kinds/suite/live-session.ts';
import { runKindCampaign } from '../../run/runner.ts';
import { loadYaml } from '../../config/yaml.ts';
import { turnNumber, type TurnRecord } from '../../domain/conversation.ts';
import { FAULT_PROFILE_NAMES } from '../../headunit/reference/faults.ts';
import { openWorkspaceStore } from '../../store/workspace.ts';

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

export function registerSessionCommands(program: Command): void {
  program
    .command('session')
    .description('a live session in the terminal: type turns to the unit, set the car\'s state between them, see each reply judged; stored as a run (docs/suites.md)')
    .option('--config <file>', 'a session config (YAML: name, headUnit, judges, safety, context, vehicle)')
    .option('--faults <profiles>', `the reference unit's fault profiles, comma-separated, each firing on every turn it applies to (${FAULT_PROFILE_NAMES.join(', ')})`)
    .option('--district <name>', 'where the session starts (a district of the reference world)')
    .option('--name <name>', 'the run name', 'live session')
    .option('--workspace <dir>', 'workspace holding the results store (icabench.db)', 'workspace')
    .option('--out <dir>', 'where to write the report (default: runs/<run id>)')
    .action(async (options: { config?: string; faults?: string; district?: string; name: string; workspace: string; out?: string }) => {
      const fromFile = options.config ? loadYaml(LiveSessionConfigSchema, options.config, 'session config') : LiveSessionConfigSchema.parse({});
      const faults = options.faults?.split(',').map((f) => f.trim()).filter(Boolean);
      const config = LiveSessionConfigSchema.parse({
        ...fromFile,
        ...(options.name !== 'live session' || !options.config ? { name: options.name } : {}),
        ...(faults ? { headUnit: { type: 'reference', faults: { profiles: faults, rate: 1 } } } : {}),
        ...(options.district ? { context: { ...fromFile.context, district: options.district } } : {}),
      });
      const session = new LiveSession(config);
      const opened = openWorkspaceStore(options.workspace);
      try {
        const run = runKindCampaign(session.kind, session.campaign, { store: opened.store, onEvent: (e) => session.onEvent(e), log: (line) => console.error(line) });
        // the rig comes up first (a unit on the bridge is waited for); a failure there ends the command
        await Promise.race([session.started, run]);
        // read only now: lines typed (or piped) meanwhile wait in stdin, none is lost before the loop listens
        const lines = createInterface({ input: process.stdin, terminal: false });
        const context = session.context();
        console.log(`run ${session.runId}: ${context.location.city}, ${context.location.district}, ${context.date} ${context.time}, gear ${context.vehicle?.gear ?? '?'} at ${context.vehicle?.speedKmh ?? 0} km/h`);
        console.log(HELP);
        for await (const raw of lines) {
          const line = raw.trim();
          if (!line) continue;
          if (line.startsWith(':')) {
            const [command, ...rest] = line.slice(1).split(/\s+/);
            if (command === 'end') break;
            if (command === 'state') {
              const c = session.context();
              console.log(`  ${c.location.district}, ${c.time}, gear ${c.vehicle?.gear}, ${c.vehicle?.speedKmh} km/h${c.vehicle?.stateOfChargePct !== undefined ? `, ${c.vehicle.stateOfChargePct} %` : ''}`);
              continue;
            }
            const change = stateChange(command, rest.join(' '));
            if (change === null) {
              console.log(`  unknown command ":${command}"\n${HELP}`);
              continue;
            }
            try {
              const c = session.setContext(change);
              console.log(`  now: ${c.location.district}, ${c.time}, gear ${c.vehicle?.gear}, ${c.vehicle?.speedKmh} km/h`);
            } catch (error) {
              console.log(`  ${(error as Error).message}`);
            }
            continue;
          }
          try {
            printTurn(await session.say(line));
          } catch (error) {
            console.log(`  ${(error as Error).message}`);
            if (session.stored()) break;
          }
        }
        lines.close();
        session.end();
        const result = await run;
        const out = resolve(options.out ?? join('runs', result.runId));
        const [{ writeRunOutputs }, { unitUnderTest }] = await Promise.all([import('../../report/write.ts'), import('../../kinds/dialogue/unit-under-test.ts')]);
        const { summary } = await writeRunOutputs(opened.store, result.runId, out, unitUnderTest(opened.store.getRun(result.runId)?.config));
        console.log(`run ${result.runId} ${result.status}: ${session.history().length} turns, ${summary.failed ? 'failed' : summary.passed ? 'passed' : 'not decided'}; report: ${join(out, 'report.html')}`);
        console.log(`pin it as a regression: icabench pin ${result.runId} session --workspace ${options.workspace}`);
      } finally {
        opened.closeAndDiscardIfEmpty();
      }
    });
}
