import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { stringify } from 'yaml';
import type { AnyCampaignKind } from '../kinds/registry.ts';
import type { ItemRunner, KindConfig, LoadedKindConfig } from '../run/kind.ts';
import { openItemRunner } from '../run/envelope.ts';
import { runKindCampaign } from '../run/runner.ts';
import { openFleetRunner } from '../fleet/coordinator.ts';
import type { ResultStore } from '../store/store.ts';
import type { CampaignLauncher } from './campaign-control.ts';
import type { ConnectedUnit } from './rig-status.ts';
import { absoluteConfigPaths } from './config-paths.ts';

/** Where the app keeps the configs it started from edited text (under the workspace). */
export const EDITED_CONFIGS_DIR = 'edited-configs';

/**
 * The real campaign runner behind the bench server: every kind on the one run skeleton, on the rig its kind opens
 * (for dialogue, the same rig as `icabench run`: tiers, head unit with its voice front end and CAN mapping,
 * vehicle feed, voice), opened here rather than inside the run so the rig status can show the unit while a
 * campaign runs. With a fleet (`icabench serve --fleet URL`) every kind's items run on the fleet's workers as
 * `icabench run --fleet` does.
 */
export class RunnerLauncher {
  private runner: ItemRunner<unknown, unknown, unknown, unknown> | null = null;

  constructor(
    private readonly store: ResultStore,
    private readonly log: (line: string) => void = () => undefined,
    private readonly fleetUrl?: string,
  ) {}

  readonly launch: CampaignLauncher = async ({ kind, loaded, resumeRunId, signal, onEvent }) => {
    const runner = this.fleetUrl ? await openFleetRunner(kind, loaded, { redisUrl: this.fleetUrl, log: this.log }) : await openItemRunner(kind, loaded, { log: this.log });
    this.runner = runner;
    try {
      // the run closes the runner when it ends
      const result = await runKindCampaign(kind, loaded, { store: this.store, runner, resumeRunId, signal, onEvent, log: this.log });
      return { runId: result.runId, status: result.status };
    } finally {
      this.runner = null;
      await runner.close();
    }
  };

  connectedUnits = (): ConnectedUnit[] => this.runner?.connectedUnits?.() ?? [];
}

/**
 * A config the UI edited, or one a run stored, becomes a file again so it loads exactly like
 * `icabench run` loads it. Its paths are made absolute first (the copy lives in the workspace, not
 * beside the original). A copy that does not load is removed again: a failed start leaves nothing.
 */
export function materializeConfig(kind: AnyCampaignKind, config: KindConfig, configsDir: string, workspace: string, label: string): LoadedKindConfig {
  const dir = join(workspace, EDITED_CONFIGS_DIR);
  mkdirSync(dir, { recursive: true });
  const path = join(dir, `${label.replace(/[^A-Za-z0-9._-]/g, '_')}-${Date.now()}.yaml`);
  writeFileSync(path, stringify(absoluteConfigPaths(kind, config, configsDir)));
  try {
    return kind.load(path);
  } catch (error) {
    rmSync(path, { force: true });
    throw error;
  }
}

/** Removes the workspace copy materializeConfig wrote for a campaign whose start failed later (e.g. another one is running). */
export function discardMaterialized(campaign: LoadedKindConfig, workspace: string): void {
  if (dirname(campaign.path) === resolve(workspace, EDITED_CONFIGS_DIR)) rmSync(campaign.path, { force: true });
}
