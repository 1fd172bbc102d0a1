import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';
import cliProgress from 'cli-progress';
import type { Command } from 'commander';
import { loadCampaignConfig } from '../../kinds/dialogue/config.ts';
import type { Rig } from '../../run/rig.ts';
import type { ConversationExecutor } from '../../run/runner.ts';
import type { CampaignEvent } from '../../run/events.ts';
import { openWorkspaceStore, workspaceStorePath, type WorkspaceStore } from '../../store/workspace.ts';
import { combinedVerdict } from '../../analysis/verdict.ts';
import { applyCampaignEvent, emptySnapshot, rigsLine } from '../../server/live-snapshot.ts';
import { findingsText, gateText } from '../outputs.ts';
import { resumeCommand, stoppedLine, unreachableLine, UNIT_UNREACHABLE_EXIT_CODE } from '../run-end.ts';
import { onStopSignal, QUIT_EXIT_CODE } from '../signals.ts';
import { SutError } from '../../headunit/types.ts';
import { readCampaignKind } from '../../kinds/registry.ts';

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
  fleetGrace: string;
  unitBuild?: string;
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
    .option('--fleet <redis-url>', 'run the conversations on fleet workers (icabench worker) through this Redis instead of here (docs/fleet.md)')
    .option('--fleet-grace <seconds>', 'with --fleet: how long the run waits for an unreachable Redis before it stops as interrupted', '120')
    .option('--no-progress', 'print plain progress lines instead of a progress bar')
    .action(async (configPath: string, options: RunOptions) => {
      // campaign kinds (src/kinds/registry.ts): dialogue runs below; item-based kinds have their own run path
      const kind = readCampaignKind(configPath);
      if (kind !== 'dialogue' && options.fleet) throw new Error(`--fleet runs dialogue campaigns only; a ${kind} campaign runs in one process (docs/fleet.md, "Limits")`);
      // the run path, rig, fleet and report modules load only once the config is known to be good: a bad config fails fast
      if (kind !== 'dialogue' && kind !== 'suite') return (await import('./run-kinds.ts')).runItemCampaignCommand(kind, configPath, options, { headUnitLostExitCode: HEAD_UNIT_LOST_EXIT_CODE });
      // a suite campaign runs on the dialogue run path with its suites' conversations as the plan
      if (kind === 'suite' && options.simulator) throw new Error('--simulator: a suite campaign plays its scripted turns; it has no simulator to replace');
      const campaign = kind === 'suite' ? (await import('../../kinds/suite/suite-kind.ts')).loadSuiteCampaign(configPath) : loadCampaignConfig(configPath);
      if (options.resume && !existsSync(workspaceStorePath(options.workspace))) {
        throw new Error(`--resume: no results store at ${workspaceStorePath(options.workspace)}, so no run to continue (pass the --workspace of the interrupted run)`);
      }
      // a resume reads the store first, so a wrong run id is reported before the rig comes up
      let opened: WorkspaceStore | null = options.resume ? openWorkspaceStore(options.workspace) : null;
      let rig: Rig | null = null;
      let executor: ConversationExecutor | undefined;
      try {
        let resumeRunId: string | undefined;
        if (typeof options.resume === 'string') {
          const run = opened!.store.getRun(options.resume);
          if (!run) throw new Error(`--resume ${options.resume}: no such run in ${options.workspace} (icabench runs lists them)`);
          resumeRunId = run.id;
        } else if (options.resume) {
          // listRuns is newest first: the latest unfinished run of this config
          resumeRunId = opened!.store.listRuns().find((r) => r.name === campaign.config.name && r.status !== 'completed')?.id;
          if (!resumeRunId) throw new Error(`--resume: no unfinished run of "${campaign.config.name}" in ${options.workspace}`);
        }
        // then the rig (every model it names checked, head unit connected) or the fleet (a worker can serve it): a problem stops a new run before the store is touched
        if (options.fleet && options.unitBuild) throw new Error('--fleet: each worker records the build of the unit on its rig (from its hello); --unit-build applies to a run in this process');
        if (options.fleet && (options.simulator || options.judge)) throw new Error('--fleet: the workers run the tiers the config names; set simulator/judges in the config instead of --simulator/--judge');
        const log = (line: string) => console.error(line);
        if (options.fleet) {
          const graceSeconds = Number(options.fleetGrace);
          if (!(graceSeconds > 0)) throw new Error(`--fleet-grace: expected a number of seconds above 0, got "${options.fleetGrace}"`);
          executor = await (await import('../../fleet/coordinator.ts')).openFleetExecutor(campaign, { redisUrl: options.fleet, log, redisGraceMs: graceSeconds * 1000 });
        } else {
          try {
            rig = await (await import('../../run/rig.ts')).openRig(campaign, { overrides: { simulator: options.simulator, judges: options.judge }, log, unitBuild: options.unitBuild });
          } catch (error) {
            // a bridge unit that never dialled in: the same exit code as a run that never reached its unit, with nothing recorded
            if (!(error instanceof SutError)) throw error;
            console.error(`icabench: the head unit was not reached, no run was recorded: ${error.message}`);
            process.exitCode = UNIT_UNREACHABLE_EXIT_CODE;
            return;
          }
        }
        opened ??= openWorkspaceStore(options.workspace);
        const store = opened.store;
        const meta = executor?.meta ?? { simulator: rig!.tiers.simulator.describe, judges: rig!.tiers.judges.map((j) => j.ref) };
        console.error(`simulator: ${meta.simulator}; judges: ${meta.judges.join(', ')}`);
        const controller = new AbortController();
        const stopListening = onStopSignal(() => {
          console.error('\nStopping: no new conversations start; finished ones are stored. Press Ctrl+C again to quit at once. Continue later with --resume.');
          controller.abort();
        });
        const display = progressDisplay(options.progress && process.stderr.isTTY === true);
        let result;
        try {
          const { runCampaign } = await import('../../run/runner.ts');
          result = await runCampaign(campaign, { store, ...(executor ? { executor } : { rig: rig! }), resumeRunId, signal: controller.signal, onEvent: display.onEvent, log: (l) => console.error(l) });
        } finally {
          display.stop();
          stopListening();
        }
        const out = resolve(options.out ?? join('runs', result.runId));
        const { writeRunOutputs } = await import('../../report/write.ts');
        const summary = await writeRunOutputs(store, result.runId, out);
        const pct = (rate: number | null) => (rate === null ? 'n/a' : `${(rate * 100).toFixed(1)}%`);
        console.log(
          `run ${result.runId} ${result.status}: ${summary.conversations} conversations, fail rate ${pct(summary.failRate)} ` +
            `(${gateText(summary.gate.failOn, summary.gate.failedByGate)}; by C alone ${pct(summary.gate.scoreOnly.failRate)}), ${findingsText(summary)}, ` +
            `mean C ${summary.meanScore?.toFixed(3) ?? 'n/a'}, unique failure types/conversation ${summary.uniqueFailureTypesPerConversation.toFixed(2)}`,
        );
        for (const fallback of summary.tiers?.flatMap((t) => t.fallbacks) ?? []) {
          console.log(`fallback: the ${fallback.role} ${fallback.requested} was not available; the ${fallback.replacedBy} tier ran instead (config: fallback)`);
        }
        console.log(`report: ${join(out, 'report.html')}`);
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
        // the run closes them when it started; a problem before it (a wrong --resume) must not leave the fleet's connections open
        await executor?.close();
        await rig?.close();
        opened?.closeAndDiscardIfEmpty();
      }
    });
}

/** A progress bar on a terminal; a line every 10% otherwise (CI logs). */
function progressDisplay(tty: boolean): { onEvent: (e: CampaignEvent) => void; stop: () => void } {
  let bar: cliProgress.SingleBar | null = null;
  let lastDecile = -1;
  let failed = 0;
  // the live view's state: on a fleet run, which rig runs what (the bar and the lines name the rigs)
  const live = emptySnapshot();
  const rigs = () => (live.rigs.length ? ` | ${rigsLine(live)}` : '');
  return {
    onEvent(event) {
      applyCampaignEvent(live, event);
      if (event.type === 'conversation_finished' && combinedVerdict(event.result).outcome === 'fail') failed++;
      if (event.type === 'run_started') {
        console.error(`run ${event.runId}: ${event.planned} conversations planned, ${event.remaining} to run${event.budgetMs ? `, budget ${Math.round(event.budgetMs / 60000)} min` : ''}`);
        if (tty) {
          bar = new cliProgress.SingleBar({ format: ' {bar} {value}/{total} conversations | {eta_formatted} left | failures so far: {failed}{rigs}', hideCursor: true }, cliProgress.Presets.shades_classic);
          bar.start(event.planned, event.planned - event.remaining, { failed: 0, rigs: '' });
        }
      } else if (event.type === 'progress') {
        if (bar) bar.update(event.done, { failed, rigs: rigs() });
        const decile = Math.floor((event.done / event.planned) * 10);
        if (!bar && decile !== lastDecile) {
          lastDecile = decile;
          console.error(`  ${event.done}/${event.planned} conversations (${(event.elapsedMs / 1000).toFixed(1)} s)${rigs()}`);
        }
      }
    },
    stop() {
      bar?.stop();
    },
  };
}
