import { join, resolve } from 'node:path';
import { ConfigError } from '../../kinds/dialogue/config.ts';
import type { CampaignKind } from '../../kinds/registry.ts';
import { runToolAgentsCampaign } from '../../kinds/tool-agents/campaign.ts';
import { loadToolAgentsConfig } from '../../kinds/tool-agents/config.ts';
import { TOOL_AGENTS_KIND } from '../../kinds/tool-agents/results.ts';
import { MANUAL_QA_KIND } from '../../kinds/manual-qa/item.ts';
import { writeToolAgentsOutputs } from '../../report/tool-agents-section.ts';
import { loadManualQaConfig } from '../../kinds/manual-qa/config.ts';
import { runManualQa } from '../../kinds/manual-qa/campaign.ts';
import { writeManualQaOutputs } from '../../report/manual-section.ts';
import type { ResultStore } from '../../store/store.ts';
import { openWorkspaceStore } from '../../store/workspace.ts';
import { resumeCommand, stoppedLine } from '../run-end.ts';
import { onStopSignal, QUIT_EXIT_CODE } from '../signals.ts';

export interface ItemRunOptions {
  out?: string;
  workspace: string;
  resume?: string | boolean;
  simulator?: string;
  judge?: string[];
}

/** The run a `--resume [runId]` names: the given id, or the latest unfinished run of this kind and config name. */
function resumeRunIdFor(store: ResultStore, kind: string, name: string, options: ItemRunOptions): string | undefined {
  if (!options.resume) return undefined;
  const id = typeof options.resume === 'string' ? options.resume : store.listRuns().find((r) => r.kind === kind && r.name === name && r.status !== 'completed')?.id;
  if (!id) throw new Error(`--resume: no unfinished ${kind} run of "${name}" in ${options.workspace}`);
  return id;
}

/**
 * `icabench run` for the item-based campaign kinds (everything but dialogue): manual-qa and tool-agents.
 * manual-qa: `--judge` replaces the config's evaluators; `--simulator` has no meaning and is refused.
 * tool-agents: `--simulator` replaces the task user simulator, `--judge` the policy judges.
 */
export async function runItemCampaignCommand(
  kind: Exclude<CampaignKind, 'dialogue' | 'suite'>,
  configPath: string,
  options: ItemRunOptions,
  run: { headUnitLostExitCode: number },
): Promise<void> {
  if (kind === TOOL_AGENTS_KIND) return runToolAgentsCommand(configPath, options);
  if (kind !== MANUAL_QA_KIND) throw new ConfigError(`${configPath}: kind ${kind}: no run path`);
  if (options.simulator) throw new ConfigError(`--simulator: a ${kind} campaign asks the questions of its test set; it has no user simulator`);
  const loaded = loadManualQaConfig(configPath);
  if (options.judge) loaded.config.evaluators = options.judge;
  // a run that fails before it is recorded leaves no store behind (as a dialogue run)
  const opened = openWorkspaceStore(resolve(options.workspace));
  const { store } = opened;
  try {
    const resumeRunId = resumeRunIdFor(store, kind, loaded.config.name, options);
    const controller = new AbortController();
    const stopListening = onStopSignal(() => {
      console.error('\nStopping: no new question is asked; answered ones are stored. Press Ctrl+C again to quit at once. Continue later with --resume.');
      controller.abort();
    });
    let lastDecile = -1;
    let result;
    try {
      result = await runManualQa(loaded, {
        store,
        resumeRunId,
        signal: controller.signal,
        log: (line) => console.error(line),
        onProgress: (done, planned) => {
          const decile = Math.floor((done / planned) * 10);
          if (decile !== lastDecile) {
            lastDecile = decile;
            console.error(`  ${done}/${planned} questions`);
          }
        },
      });
    } finally {
      stopListening();
    }
    const out = resolve(options.out ?? join('runs', result.runId));
    const { summary } = writeManualQaOutputs(store, result.runId, out);
    const first = summary.tiers[0];
    const mean = (m: keyof typeof first.metrics) => (first.metrics[m].mean === null ? 'n/a' : first.metrics[m].mean!.toFixed(3));
    console.log(
      `run ${result.runId} ${result.status}: ${summary.questions}/${summary.planned} questions, ${summary.outcomes.fail} failed, ${summary.outcomes.error} head unit errors; ` +
        `${first.tier}: completeness ${mean('completeness_hard')}, risk awareness ${mean('risk_awareness')}, correctness ${mean('correctness')}` +
        (summary.omissionSearch ? `; omission search ${summary.omissionSearch.omissions}/${summary.omissionSearch.asked}` : ''),
    );
    console.log(`report: ${join(out, 'report.html')}`);
    if (result.stopReason) {
      console.error(stoppedLine(result.runId, result.stopReason, resumeCommand(configPath, result.runId, options)));
      process.exitCode = run.headUnitLostExitCode;
    } else if (result.status === 'interrupted') process.exitCode = QUIT_EXIT_CODE;
  } finally {
    opened.closeAndDiscardIfEmpty();
  }
}

/** `icabench run` on a `kind: tool-agents` config: every task trial stored as it ends (Ctrl+C stops after the running trials; --resume continues). */
async function runToolAgentsCommand(configPath: string, options: ItemRunOptions): Promise<void> {
  const loaded = loadToolAgentsConfig(configPath);
  if (options.simulator) loaded.config.user = options.simulator;
  if (options.judge) loaded.config.judges = options.judge;
  // a run that fails before it is recorded leaves no store behind (as a dialogue run)
  const opened = openWorkspaceStore(resolve(options.workspace));
  const { store } = opened;
  try {
    const resumeRunId = resumeRunIdFor(store, TOOL_AGENTS_KIND, loaded.config.name, options);
    const controller = new AbortController();
    const stopListening = onStopSignal(() => {
      console.error('\nStopping: no new trial starts; finished ones are stored. Press Ctrl+C again to quit at once. Continue later with --resume.');
      controller.abort();
    });
    let result;
    let done = 0;
    try {
      result = await runToolAgentsCampaign(loaded, {
        store,
        resumeRunId,
        signal: controller.signal,
        log: (line) => console.error(line),
        onTrial: () => {
          done++;
          if (done % 50 === 0) console.error(`  ${done} trials`);
        },
      });
    } finally {
      stopListening();
    }
    const out = resolve(options.out ?? join('runs', result.runId!));
    const { summary } = writeToolAgentsOutputs(store, result.runId!, out);
    console.log(`run ${result.runId} ${result.status}: ${summary.trials}/${summary.planned} task trials, R = 1 in ${Object.values(summary.families).reduce((n, f) => n + f.successes, 0)}; ${summary.notRunnable.length} tasks not runnable, ${summary.invalidTasks.length} not loaded`);
    for (const [family, f] of Object.entries(summary.families)) {
      const last = f.reliability.byK.at(-1);
      const atK = last && last.k > 1 ? `, pass^${last.k} ${last.passHatK.unbiased.toFixed(3)} (first-k ${last.passHatK.firstK.toFixed(3)}), pass@${last.k} ${last.passAtK.unbiased.toFixed(3)}` : '';
      console.log(`  ${family}: ${f.runnableTasks}/${f.tasks} tasks runnable; pass^1 ${f.reliability.byK[0]?.passHatK.unbiased.toFixed(3) ?? 'n/a'}${atK}`);
    }
    const macro = summary.competition.macroPassHat3;
    console.log(`  Avg Pass^3 (CAR-bench leaderboard): ${macro === null ? 'n/a (needs base, hallucination and disambiguation tasks with 3 trials)' : macro.toFixed(3)}`);
    console.log(`  ${summary.reward.statement}`);
    const misfires = summary.misfires;
    if (misfires.trials.length) console.log(`  user-simulator misfires: ${misfires.trials.length} of ${misfires.failedTrials} failed trials; pass rate ${misfires.passRate.included?.toFixed(3)} with them, ${misfires.passRate.excluded?.toFixed(3)} without`);
    console.log(`report: ${join(out, 'report.html')}`);
    if (result.status === 'interrupted') process.exitCode = QUIT_EXIT_CODE;
  } finally {
    opened.closeAndDiscardIfEmpty();
  }
}
