import { join, resolve } from 'node:path';
import { ConfigError } from '../../campaign/config.ts';
import type { CampaignKind } from '../../campaign/kinds.ts';
import { MANUAL_QA_KIND } from '../../manual/campaign.ts';
import { loadManualQaConfig } from '../../manual/config.ts';
import { runManualQa } from '../../manual/run.ts';
import { writeManualQaOutputs } from '../../report/manual-section.ts';
import { ResultStore } from '../../store/store.ts';
import { workspaceStorePath } from '../../store/workspace.ts';

export interface ItemRunOptions {
  out?: string;
  workspace: string;
  resume?: string | boolean;
  simulator?: string;
  judge?: string[];
}

/**
 * `icabench run` for the item-based campaign kinds (everything but dialogue): today manual-qa.
 * `--judge` replaces the config's evaluators; `--simulator` has no meaning here and is refused.
 */
export async function runItemCampaignCommand(
  kind: Exclude<CampaignKind, 'dialogue'>,
  configPath: string,
  options: ItemRunOptions,
  run: { headUnitLostExitCode: number },
): Promise<void> {
  if (kind !== MANUAL_QA_KIND) throw new ConfigError(`${configPath}: kind ${kind}: no run path`);
  if (options.simulator) throw new ConfigError(`--simulator: a ${kind} campaign asks the questions of its test set; it has no user simulator`);
  const loaded = loadManualQaConfig(configPath);
  if (options.judge) loaded.config.evaluators = options.judge;
  const store = ResultStore.open(workspaceStorePath(resolve(options.workspace)));
  try {
    let resumeRunId: string | undefined;
    if (options.resume) {
      resumeRunId =
        typeof options.resume === 'string'
          ? options.resume
          : store
              .listRuns()
              .filter((r) => r.kind === kind && r.name === loaded.config.name && r.status !== 'completed')
              .at(0)?.id;
      if (!resumeRunId) throw new Error(`--resume: no unfinished ${kind} run of "${loaded.config.name}" in ${options.workspace}`);
    }
    const controller = new AbortController();
    const onSigint = () => {
      if (controller.signal.aborted) process.exit(130);
      console.error('\nStopping: no new question is asked; answered ones are stored. Press Ctrl+C again to quit at once. Continue later with --resume.');
      controller.abort();
    };
    process.on('SIGINT', onSigint);
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
      process.off('SIGINT', onSigint);
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
      console.error(`run ${result.runId} stopped: ${result.stopReason}. Continue it with --resume ${result.runId} once the head unit is back.`);
      process.exitCode = run.headUnitLostExitCode;
    } else if (result.status === 'interrupted') process.exitCode = 130;
  } finally {
    store.close();
  }
}
