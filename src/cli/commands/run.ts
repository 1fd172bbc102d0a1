import { methodOfStoredConfig, presetOf } from '../../domain/method.ts';
import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';
import cliProgress from 'cli-progress';
import type { Command } from 'commander';
import type { ItemRunner } from '../../run/kind.ts';

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- the runner of whichever kind the config selects
type AnyItemRunner = ItemRunner<any, any, any, any>;
import type { CampaignEvent } from '../../run/events.ts';
import { resumedRun } from '../../run/resume.ts';
import { openWorkspaceStore, workspaceStorePath, type WorkspaceStore } from '../../store/workspace.ts';
import { combinedVerdict } from '../../analysis/verdict.ts';
import { applyCampaignEvent, emptySnapshot, rigsLine } from '../../server/live-snapshot.ts';
import { campaignKind, readCampaignKind } from '../../kinds/registry.ts';
import { resumeCommand, stoppedLine, unreachableLine, UNIT_UNREACHABLE_EXIT_CODE } from '../run-end.ts';
import { onStopSignal, QUIT_EXIT_CODE } from '../signals.ts';
import { SutError } from '../../headunit/types.ts';
import { maxTimerValue, timerLimitMessage } from '../../domain/durations.ts';

/** Exit code of `icabench run` when the run stopped because the head unit left and did not come back within the grace. */
export const HEAD_UNIT_LOST_EXIT_CODE = 3;

interface RunOptions {
  out?: string;
  workspace: string;
  resume?: string | boolean;
  simulator?: string;
  judge?: string[];
  progress: boolean;
  fleet?: string;
  unitBuild?: string;
  fleetGrace: string;
}

export function registerRunCommands(program: Command): void {
  program
    .command('run')
    .description('run a campaign (bench-configs/*.yaml) and write summary.json, report.html, junit.xml and conversations.csv')
    .argument('<config>', 'campaign config, e.g. bench-configs/quickstart.yaml')
    .option('--out <dir>', 'where to write the report (default: runs/<run id>)')
    .option('--workspace <dir>', 'workspace holding the results store (icabench.db)', 'workspace')
    .option('--resume [runId]', 'continue an interrupted run (without an id: the latest unfinished run of this config)')
    .option('--simulator <ref>', 'override the simulator: template or a model reference (ollama:…, openai-compat:…, gguf:…)')
    .option('--judge <ref...>', 'override the judges, in precedence order: oracle and/or model references')
    .option('--unit-build <build>', 'the head unit\'s build, recorded with the run (for units whose hello does not announce one; wins over it): icabench compare lists what a build fixed and regressed')
    .option('--fleet <redis-url>', 'run the items (conversations, questions, task trials) on fleet workers (icabench worker) through this Redis instead of here (docs/fleet.md)')
    .option('--fleet-grace <seconds>', 'with --fleet: how long the run waits for an unreachable Redis before it stops as interrupted', '120')
    .option('--no-progress', 'print plain progress lines instead of a progress bar')
    .action(async (configPath: string, options: RunOptions) => {
      // the kind first (src/kinds/registry.ts): every kind runs on the one run skeleton (src/run/runner.ts)
      const kindName = readCampaignKind(configPath);
      const kind = await campaignKind(kindName);
      // the rig, fleet and report modules load only once the config is known to be good: a bad config fails fast
      const loaded = kind.load(configPath);
      if (options.resume && !existsSync(workspaceStorePath(options.workspace))) {
        throw new Error(`--resume: no results store at ${workspaceStorePath(options.workspace)}, so no run to continue (pass the --workspace of the interrupted run)`);
      }
      // a resume reads the store first, so a wrong run id (or a run of another kind or config) is reported before the rig comes up
      let opened: WorkspaceStore | null = options.resume ? openWorkspaceStore(options.workspace) : null;
      let runner: AnyItemRunner | null = null;
      try {
        let resumeRunId: string | undefined;
        if (typeof options.resume === 'string') {
          if (!opened!.store.getRun(options.resume)) throw new Error(`--resume ${options.resume}: no such run in ${options.workspace} (icabench runs lists them)`);
          resumeRunId = options.resume;
        } else if (options.resume) {
          // listRuns is newest first: the latest unfinished run of this kind and config
          resumeRunId = opened!.store.listRuns().find((r) => r.kind === kind.name && r.name === loaded.config.name && r.status !== 'completed')?.id;
          if (!resumeRunId) throw new Error(`--resume: no unfinished ${kind.name} run of "${loaded.config.name}" in ${options.workspace}`);
        }
        if (resumeRunId) resumedRun(opened!.store, resumeRunId, kind.name, loaded.config, kind.configSchema);
        // then the rig (every model it names checked, head unit connected) or the fleet (a worker can serve it): a problem stops a new run before the store is touched
        if (options.fleet && options.unitBuild) throw new Error('--fleet: each worker records the build of the unit on its rig (from its hello); --unit-build applies to a run in this process');
        if (options.fleet && (options.simulator || options.judge)) throw new Error('--fleet: the workers run the tiers the config names; set simulator/judges in the config instead of --simulator/--judge');
        const log = (line: string) => console.error(line);
        const graceSeconds = Number(options.fleetGrace);
        if (options.fleet && !(graceSeconds > 0 && graceSeconds <= maxTimerValue('s'))) throw new Error(`--fleet-grace: expected a number of seconds above 0 and ${timerLimitMessage('s')}, got "${options.fleetGrace}"`);
        try {
          runner = options.fleet
            ? await (await import('../../fleet/coordinator.ts')).openFleetRunner(kind, loaded, { redisUrl: options.fleet, log, redisGraceMs: graceSeconds * 1000 })
            : await (await import('../../run/envelope.ts')).openItemRunner(kind, loaded, { overrides: { simulator: options.simulator, judges: options.judge }, log, unitBuild: options.unitBuild });
        } catch (error) {
          // a bridge unit that never dialled in: the same exit code as a run that never reached its unit, with nothing recorded
          if (!(error instanceof SutError)) throw error;
          console.error(`icabench: the head unit was not reached, no run was recorded: ${error.message}`);
          process.exitCode = UNIT_UNREACHABLE_EXIT_CODE;
          return;
        }
        opened ??= openWorkspaceStore(options.workspace);
        const store = opened.store;
        // which method runs (docs/reproduction.md), said with the tiers line before the first item
        const announce = deferredBanner(runner.meta, presetOf(kind.view.paper, methodOfStoredConfig(loaded.config)).statement);
        const controller = new AbortController();
        const stopListening = onStopSignal(() => {
          console.error(`\nStopping: no new ${kind.nouns.items} start; finished ones are stored. Press Ctrl+C again to quit at once. Continue later with --resume.`);
          controller.abort();
        });
        const display = progressDisplay(options.progress && process.stderr.isTTY === true, kind.nouns.items);
        let result;
        try {
          const { runKindCampaign } = await import('../../run/runner.ts');
          const given = runner;
          runner = null; // the run closes it from here on
          const onEvent = (event: CampaignEvent) => {
            announce();
            display.onEvent(event);
          };
          result = await runKindCampaign(kind, loaded, { store, runner: given!, resumeRunId, signal: controller.signal, onEvent, log: (line) => (announce(), log(line)) });
        } finally {
          display.stop();
          stopListening();
        }
        const out = resolve(options.out ?? join('runs', result.runId));
        const lines = await kind.outputs.write(store, result.runId, out);
        // the kind's last line is its report's first screen in plain words: it stays the last line
        for (const line of [...lines.slice(0, -1), `report: ${join(out, 'report.html')}`, ...lines.slice(-1)]) console.log(line);
        const fleet = options.fleet ? (await import('../../fleet/redis.ts')).redactedRedisUrl(options.fleet) : undefined;
        const resume = resumeCommand(configPath, result.runId, { workspace: options.workspace, fleet });
        if (result.unreachable) {
          console.error(unreachableLine(result.runId, result.unreachable, resume));
          process.exitCode = UNIT_UNREACHABLE_EXIT_CODE;
        } else if (result.stopReason) {
          console.error(stoppedLine(result.runId, result.stopReason, resume));
          process.exitCode = HEAD_UNIT_LOST_EXIT_CODE;
        } else if (result.status === 'interrupted') process.exitCode = QUIT_EXIT_CODE;
      } finally {
        // a problem before the run (a wrong --resume, a store that cannot open) must not leave the rig or the fleet's connections open
        await runner?.close();
        opened?.closeAndDiscardIfEmpty();
      }
    });
}

/**
 * The run's tiers line (agent, simulator, judges), said once the run has planned (before its first line or event):
 * a config or input error found while planning is then the first line on stderr.
 */
function deferredBanner(meta: Record<string, unknown>, preset: string): () => void {
  let banner: string | null = `${preset}\n${Object.entries(meta).map(([what, refs]) => `${what}: ${Array.isArray(refs) ? refs.join(', ') : String(refs)}`).join('; ')}`;
  return () => {
    if (banner !== null) console.error(banner);
    banner = null;
  };
}

/** A progress bar on a terminal; a line every 10% otherwise (CI logs). */
function progressDisplay(tty: boolean, items: string): { onEvent: (e: CampaignEvent) => void; stop: () => void } {
  let bar: cliProgress.SingleBar | null = null;
  let lastDecile = -1;
  let failed = 0;
  // the live view's state: on a fleet run, which rig runs what (the bar and the lines name the rigs)
  const live = emptySnapshot();
  const rigs = () => (live.rigs.length ? ` | ${rigsLine(live)}` : '');
  return {
    onEvent(event) {
      applyCampaignEvent(live, event);
      if ((event.type === 'conversation_finished' && combinedVerdict(event.result).outcome === 'fail') || (event.type === 'item_finished' && event.outcome === 'fail')) failed++;
      if (event.type === 'run_started') {
        console.error(`run ${event.runId}: ${event.planned} ${items} planned, ${event.remaining} to run${event.budgetMs ? `, budget ${Math.round(event.budgetMs / 60000)} min` : ''}`);
        if (tty) {
          bar = new cliProgress.SingleBar({ format: ` {bar} {value}/{total} ${items} | {eta_formatted} left | failures so far: {failed}{rigs}`, hideCursor: true }, cliProgress.Presets.shades_classic);
          bar.start(event.planned, event.planned - event.remaining, { failed: 0, rigs: '' });
        }
      } else if (event.type === 'progress') {
        if (bar) bar.update(event.done, { failed, rigs: rigs() });
        const decile = Math.floor((event.done / event.planned) * 10);
        if (!bar && decile !== lastDecile) {
          lastDecile = decile;
          console.error(`  ${event.done}/${event.planned} ${items} (${(event.elapsedMs / 1000).toFixed(1)} s)${rigs()}`);
        }
      }
    },
    stop() {
      bar?.stop();
    },
  };
}
